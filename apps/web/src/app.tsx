import { useEffect, useState, useSyncExternalStore } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import type { WhoAmI } from "@fm/domain";
import { api, onReachabilityChange, hubReachable } from "./api.ts";
import { completeLogin, isLoggedIn, loadConfig, logout, onAuthChange, startLogin, type UiConfig } from "./auth.ts";
import { Link, navigate, useLocation } from "./router.tsx";
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
  const loggedIn = useSyncExternalStore(onAuthChange, isLoggedIn);
  const { path, search } = useLocation();

  useEffect(() => {
    loadConfig()
      .then(async (c) => {
        setConfig(c);
        if (location.pathname === "/ui/callback") navigate(await completeLogin(location.search), { replace: true });
      })
      .catch((e: Error) => setError(e.message));
  }, []);

  if (error)
    return (
      <main className="login">
        <h1>Fleet Manager</h1>
        <ErrorNote message={error} />
        <button
          type="button"
          onClick={() => (setError(undefined), void startLogin("/ui/").catch((e: Error) => setError(e.message)))}
        >
          Log in again
        </button>
      </main>
    );
  if (!config || path === "/callback")
    return (
      <main className="login" aria-busy="true">
        Loading…
      </main>
    );
  if (!loggedIn) return <LoginPage config={config} onError={setError} />;
  return <LoggedIn path={path} search={search} />;
}

function LoginPage({ config, onError }: { config: UiConfig; onError: (m: string) => void }) {
  return (
    <main className="login">
      <h1>Fleet Manager</h1>
      {config.issuer ? (
        <>
          <p>Log in with your company account to see the fleet.</p>
          <button
            type="button"
            className="primary"
            onClick={() => void startLogin(location.pathname + location.search).catch((e: Error) => onError(e.message))}
          >
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
  const queries = useQueryClient();
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
        <button
          type="button"
          onClick={() => {
            queries.clear();
            logout();
          }}
        >
          Log out
        </button>
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
