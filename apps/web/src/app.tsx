import { useEffect, useState, useSyncExternalStore } from "react";
import { isCancelledError, useQuery, useQueryClient } from "@tanstack/react-query";
import type { WhoAmI } from "@fm/domain";
import { ApiError, api, onReachabilityChange, hubReachable } from "./api.ts";
import {
  authState,
  loadConfig,
  loginErrorMessage,
  logout,
  onAuthChange,
  sessionEndedBecause,
  sessionFound,
  startLogin,
  type UiConfig,
} from "./auth.ts";
import { Link, useLocation } from "./router.tsx";
import { SessionContext, sessionOf } from "./session.tsx";
import { ErrorBoundary, ErrorNote, HubBanner } from "./ui.tsx";
import { Overview } from "./views/overview.tsx";
import { Devices } from "./views/devices.tsx";
import { DeviceDetail } from "./views/device-detail.tsx";
import { Jobs } from "./views/jobs.tsx";
import { JobDetail } from "./views/job-detail.tsx";
import { JobCreate } from "./views/job-create.tsx";
import { Satellites } from "./views/satellites.tsx";
import { Audit } from "./views/audit.tsx";
import { Discrepancies } from "./views/discrepancies.tsx";

const NAV = [
  ["/", "Overview"],
  ["/devices", "Devices"],
  ["/discrepancies", "Discrepancies"],
  ["/jobs", "Jobs"],
  ["/satellites", "Satellites"],
  ["/audit", "Audit log"],
] as const;

export function App() {
  return (
    <>
      <HubBanner />
      <Shell />
    </>
  );
}

/** Once the hub answers again after an outage, every query on screen is asked again. */
function useRefetchWhenHubReturns(): void {
  const queries = useQueryClient();
  useEffect(
    () =>
      onReachabilityChange(() => {
        if (hubReachable()) void queries.refetchQueries({ type: "active" });
      }),
    [queries],
  );
}

function Shell() {
  useRefetchWhenHubReturns();
  const [config, setConfig] = useState<UiConfig>();
  const [error, setError] = useState<string>();
  const state = useSyncExternalStore(onAuthChange, authState);
  const { path, search } = useLocation();
  const queries = useQueryClient();

  useEffect(() => {
    loadConfig()
      .then(setConfig)
      .catch((e: Error) => setError(e.message));
  }, []);
  // Who is logged in: the hub knows, by the session cookie this page cannot read. Asked on load,
  // and again whenever a call found the session over (the answer is then the login page).
  useEffect(() => {
    if (state !== "unknown") return;
    queries
      .fetchQuery({ queryKey: ["whoami"], queryFn: () => api<WhoAmI>("/api/v1/whoami"), staleTime: Infinity })
      .then(sessionFound)
      .catch((e: unknown) => {
        // A 401 is the login page (the call itself said so); a cancelled ask is the page moving on.
        if (!(e instanceof ApiError && e.status === 401) && !isCancelledError(e))
          setError(e instanceof Error ? e.message : String(e));
      });
  }, [state, queries]);
  useEffect(() => {
    if (state === "out") queries.clear();
  }, [state, queries]);

  if (error)
    return (
      <main className="login">
        <h1>Fleet Manager</h1>
        <ErrorNote message={error} />
        <button type="button" onClick={() => location.reload()}>
          Try again
        </button>
      </main>
    );
  if (!config || state === "unknown")
    return (
      <main className="login" aria-busy="true">
        Loading…
      </main>
    );
  if (state === "out") return <LoginPage config={config} search={search} />;
  return <LoggedIn path={path} search={search} />;
}

function LoginPage({ config, search }: { config: UiConfig; search: URLSearchParams }) {
  const failed = loginErrorMessage(search);
  const ended = sessionEndedBecause();
  // Back to this page after the login, without the failed login's own words.
  const here = new URLSearchParams(search);
  here.delete("login_error");
  here.delete("issuer_error");
  const returnTo = location.pathname + (here.size ? `?${here.toString()}` : "");
  return (
    <main className="login">
      <h1>Fleet Manager</h1>
      {config.issuer ? (
        <>
          {failed ? <ErrorNote message={failed} /> : ended ? <p role="status">{ended}</p> : null}
          <p>Log in with your company account to see the fleet.</p>
          <button type="button" className="primary" onClick={() => startLogin(returnTo)}>
            Log in
          </button>
        </>
      ) : (
        <ErrorNote message="This hub has no OIDC issuer configured (FM_OIDC_ISSUER): people cannot log in here." />
      )}
    </main>
  );
}

function LoggedIn({ path, search }: { path: string; search: URLSearchParams }) {
  const [logoutError, setLogoutError] = useState<string>();
  const who = useQuery({ queryKey: ["whoami"], queryFn: () => api<WhoAmI>("/api/v1/whoami"), staleTime: Infinity });
  const [menuOpen, setMenuOpen] = useState(false);
  if (who.error)
    return (
      <main className="login">
        <ErrorNote error={who.error} />
      </main>
    );
  if (!who.data)
    return (
      <main className="login" aria-busy="true">
        Loading…
      </main>
    );
  const session = sessionOf(who.data);
  const section = "/" + (path.split("/")[1] ?? "");
  return (
    <SessionContext.Provider value={session}>
      <a href="#main" className="skip">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Fleet Manager</span>
        <button
          type="button"
          className="menu"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <nav id="nav" aria-label="Main" className={menuOpen ? "open" : ""}>
          <ul>
            {NAV.map(([to, label]) => (
              <li key={to}>
                <Link
                  to={`/ui${to === "/" ? "/" : to}`}
                  aria-current={section === to ? "page" : undefined}
                  onClick={() => setMenuOpen(false)}
                >
                  {label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <span className="who" data-testid="who">
          {who.data.principal.replace(/^person:/, "")} <span className="scopes">({accessLabel(session.can)})</span>
        </span>
        <button type="button" onClick={() => void logout().catch((e: Error) => setLogoutError(e.message))}>
          Log out
        </button>
        {logoutError && <ErrorNote message={logoutError} />}
      </header>
      <main id="main" tabIndex={-1}>
        <ErrorBoundary key={path}>
          <Page path={path} search={search} />
        </ErrorBoundary>
      </main>
    </SessionContext.Provider>
  );
}

const accessLabel = (can: (s: "fleet.operate" | "fleet.admin") => boolean) =>
  can("fleet.admin") ? "admin" : can("fleet.operate") ? "operator" : "read-only";

function Page({ path, search }: { path: string; search: URLSearchParams }) {
  const parts = path.split("/").filter(Boolean);
  switch (parts[0]) {
    case undefined:
      return <Overview />;
    case "devices":
      return parts[1] ? <DeviceDetail id={parts[1]} /> : <Devices search={search} />;
    case "jobs":
      if (parts[1] === "new") return <JobCreate search={search} />;
      return parts[1] ? <JobDetail id={parts[1]} /> : <Jobs search={search} />;
    case "discrepancies":
      return <Discrepancies search={search} />;
    case "satellites":
      return <Satellites />;
    case "audit":
      return <Audit search={search} />;
    default:
      return <ErrorNote message="No such page." />;
  }
}
