/** Satellites: each agent's client, its last token and heartbeat, its reflectors' ages; secret rotation for admins. */
import { useState } from "react";
import { useMutation, useQuery } from "@tanstack/react-query";
import type { SatelliteList, Site, SiteList } from "@fm/domain";
import { api } from "../api.ts";
import { LIVE_REFRESH_MS, Updated, useNow } from "../live.tsx";
import { useTitle } from "../router.tsx";
import { useSession } from "../session.tsx";
import { Badge, ErrorNote, Loading, Section, age, ago, when, Scroll } from "../ui.tsx";

/**
 * A site as its Reporting condition has it: green "reporting" only while every source that has
 * pushed for it did so within the hub's window; otherwise "silent", naming each silent source
 * and since when it has said nothing (its last accepted push).
 */
export function SiteReporting({ site }: { site: Site }) {
  const now = useNow();
  const reporting = site.conditions.find((c) => c.type === "Reporting");
  if (!reporting || reporting.status === "Unknown")
    return (
      <span data-testid={`site-state-${site.slug}`}>
        <Badge value="unknown" kind="neutral" /> <span className="muted">no source has pushed yet</span>
      </span>
    );
  if (reporting.status === "True")
    return (
      <span data-testid={`site-state-${site.slug}`}>
        <Badge value="reporting" kind="good" />
      </span>
    );
  return (
    <span data-testid={`site-state-${site.slug}`}>
      <Badge value="silent" kind="bad" />{" "}
      {site.sources
        .filter((s) => s.silent)
        .map((s) => (
          <span key={s.source} className="source silent">
            {s.source} silent since {when(s.lastAcceptedAt)} ({ago(s.lastAcceptedAt, now)})
          </span>
        ))}
    </span>
  );
}

interface Rotated {
  clientId: string;
  clientSecret: string;
}

export function Satellites() {
  useTitle("Satellites");
  const { can } = useSession();
  const satellites = useQuery({
    queryKey: ["satellites"],
    queryFn: () => api<SatelliteList>("/api/v1/satellites?limit=1000"),
    refetchInterval: LIVE_REFRESH_MS,
  });
  const sites = useQuery({
    queryKey: ["sites"],
    queryFn: () => api<SiteList>("/api/v1/sites?limit=1000"),
    refetchInterval: LIVE_REFRESH_MS,
  });
  const [secret, setSecret] = useState<Rotated>();
  const rotate = useMutation({
    mutationFn: ({ name, agent }: { name: string; agent: string }) =>
      api<Rotated>(`/api/v1/satellites/${name}/agents/${agent}/rotate-secret`, { method: "POST" }),
    onSuccess: setSecret,
  });
  if (satellites.error) return <ErrorNote error={satellites.error} />;
  if (!satellites.data) return <Loading />;
  const siteById = new Map(sites.data?.items.map((s) => [s.id, s]));
  return (
    <>
      <h1>Satellites</h1>
      <Updated
        at={Math.min(satellites.dataUpdatedAt, sites.dataUpdatedAt || satellites.dataUpdatedAt)}
        failed={satellites.isRefetchError || sites.isRefetchError}
      />
      {secret && (
        <div role="alert" className="secret">
          <p>
            New secret of <strong>{secret.clientId}</strong>. It is shown this once: store it in the satellite's secret
            store now. The previous secret keeps working for the rotation overlap.
          </p>
          <code data-testid="new-secret">{secret.clientSecret}</code>{" "}
          <button
            type="button"
            onClick={() => {
              // The mutation keeps its answer too: drop it, so the secret is nowhere in the page's memory.
              setSecret(undefined);
              rotate.reset();
            }}
          >
            I have stored it
          </button>
        </div>
      )}
      {rotate.error ? <ErrorNote error={rotate.error} /> : null}
      {satellites.data.items.length === 0 && <p>No satellite is expected yet.</p>}
      {satellites.data.items.map((sat) => (
        <Section key={sat.id} title={`${sat.name} (${sat.environment})`} id={`sat-${sat.name}`}>
          <ul className="plain" aria-label={`Sites of ${sat.name}`}>
            {sat.siteIds.map((id) => {
              const site = siteById.get(id);
              return (
                <li key={id}>
                  {site ? (
                    <>
                      {site.slug}: <SiteReporting site={site} />
                    </>
                  ) : (
                    id
                  )}
                </li>
              );
            })}
          </ul>
          <Scroll label={`Agents of ${sat.name}`}>
            <table>
              <thead>
                <tr>
                  <th scope="col">Agent</th>
                  <th scope="col">Client</th>
                  <th scope="col">Last token</th>
                  <th scope="col">Last heartbeat</th>
                  <th scope="col">Reflectors (last success)</th>
                  {can("fleet.admin") && <th scope="col">Secret</th>}
                </tr>
              </thead>
              <tbody>
                {sat.clients.map((c) => (
                  <tr key={c.clientId}>
                    <th scope="row">{c.agent}</th>
                    <td>
                      {c.clientId} {c.revoked && <Badge value="revoked" kind="bad" />}
                    </td>
                    <td>{ago(c.lastTokenAt)}</td>
                    <td>{ago(c.lastHeartbeatAt)}</td>
                    <td>
                      {c.reflectorAgesSeconds
                        ? Object.entries(c.reflectorAgesSeconds).map(([r, s]) => (
                            <span key={r} className="source">
                              {r}: {age(s)}
                            </span>
                          ))
                        : "—"}
                    </td>
                    {can("fleet.admin") && (
                      <td>
                        <button
                          type="button"
                          disabled={c.revoked || rotate.isPending}
                          onClick={() => {
                            if (confirm(`Issue a new secret for ${c.clientId}?`))
                              rotate.mutate({ name: sat.name, agent: c.agent });
                          }}
                        >
                          Rotate secret
                        </button>
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
        </Section>
      ))}
    </>
  );
}
