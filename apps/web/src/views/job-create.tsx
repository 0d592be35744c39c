/**
 * Create a job: a kind, devices of one site (picked by name as the person types, or brought
 * from the device list's selection in `?devices=a,b`), and the kind's parameters as a form built
 * from the kind's schema in @fm/domain. The same schema checks the parameters here as in the
 * hub, so a wrong value is named beside its field before anything is sent.
 */
import { useState, type FormEvent } from "react";
import { keepPreviousData, useMutation, useQuery } from "@tanstack/react-query";
import { JOB_KINDS, JOB_PARAMS, type DeviceBriefList, type Job, type JobKind } from "@fm/domain";
import { ApiError, api, query } from "../api.ts";
import { navigate, useTitle } from "../router.tsx";
import { useSession } from "../session.tsx";
import { ErrorNote, formatCount } from "../ui.tsx";

/** The zod type a field holds under its optional/default/nullable/pipe wrappers ("string", "number", "array" …). */
function baseType(field: unknown): string {
  let t = field as { def: { type: string; innerType?: unknown; in?: unknown } };
  for (;;) {
    const { def } = t;
    if (def.innerType !== undefined) t = def.innerType as typeof t;
    else if (def.type === "pipe" && def.in !== undefined) t = def.in as typeof t;
    else return def.type;
  }
}

/**
 * A field's text as the value its schema checks, by the field's type: text stays text for string
 * and enum fields (a ticket "12345" or an image "2024" is a name, not a number), numbers and
 * booleans are read as such, and only list and object fields take JSON. Text that does not read
 * as the type is passed as it is, so the schema names the field's error.
 */
function valueOf(field: unknown, text: string): unknown {
  switch (baseType(field)) {
    case "number":
      return text !== "" && Number.isFinite(Number(text)) ? Number(text) : text;
    case "boolean":
      return text === "true" ? true : text === "false" ? false : text;
    case "array":
    case "object":
    case "record":
    case "tuple":
      try {
        return JSON.parse(text);
      } catch {
        return text;
      }
    default:
      return text;
  }
}

/** The kind a link asks for, if it is one (a link with another kind opens BURN_IN, not an empty page). */
const kindOf = (asked: string | null): JobKind =>
  (JOB_KINDS as readonly string[]).includes(asked ?? "") ? (asked as JobKind) : "BURN_IN";

export function JobCreate({ search }: { search: URLSearchParams }) {
  useTitle("Create a job");
  const { can } = useSession();
  const [kind, setKind] = useState<JobKind>(() => kindOf(search.get("kind")));
  const [devices, setDevices] = useState<string[]>(() => [
    ...new Set((search.get("devices") ?? "").split(/[\s,]+/).filter(Boolean)),
  ]);
  const [values, setValues] = useState<Record<string, string>>({});
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const schema = JOB_PARAMS[kind];
  const fields = Object.entries(
    schema.shape as Record<string, { description?: string; safeParse: (v: unknown) => { success: boolean } }>,
  );

  const create = useMutation({
    mutationFn: async (params: Record<string, unknown>) => {
      const names = devices;
      if (names.length === 0) throw new ApiError(400, undefined, "Name at least one device");
      const ids = await Promise.all(
        names.map(async (name) => {
          const found = await api<DeviceBriefList>(
            `/api/v1/devices${query({ nameExact: name, brief: true, limit: 1 })}`,
          );
          if (!found.items[0]) throw new ApiError(404, "device_not_found", `No device is named ${name}`);
          return found.items[0].id;
        }),
      );
      return api<Job>("/api/v1/jobs", { method: "POST", body: { kind, deviceIds: ids, params } });
    },
    onSuccess: (job) => navigate(`/ui/jobs/${job.id}`),
  });

  if (!can("fleet.operate"))
    return (
      <>
        <h1>Create a job</h1>
        <ErrorNote message="Creating jobs needs the fleet.operate scope." />
      </>
    );

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const params = Object.fromEntries(
      Object.entries(values)
        .filter(([k, v]) => v.trim() !== "" && k in schema.shape)
        .map(([k, v]) => [k, valueOf(schema.shape[k as keyof typeof schema.shape], v.trim())]),
    );
    const checked = schema.safeParse(params);
    if (!checked.success) {
      setFieldErrors(Object.fromEntries(checked.error.issues.map((i) => [String(i.path[0] ?? "_"), i.message])));
      return;
    }
    setFieldErrors({});
    create.mutate(checked.data);
  };

  return (
    <>
      <h1>Create a job</h1>
      <form onSubmit={submit} className="stack" noValidate>
        <label>
          Kind
          <select
            value={kind}
            onChange={(e) => {
              setKind(e.target.value as JobKind);
              setValues({});
              setFieldErrors({});
            }}
          >
            {JOB_KINDS.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
        <DevicePicker chosen={devices} onChange={setDevices} />
        <fieldset>
          <legend>Parameters of {kind}</legend>
          {fields.length === 0 && <p>This kind takes no parameters.</p>}
          {fields.map(([name, field]) => {
            const optional = field.safeParse(undefined).success;
            const errorId = `param-${name}-error`;
            return (
              <div key={name} className="field">
                <label>
                  {name}
                  {optional ? " (optional)" : ""}
                  <input
                    name={name}
                    value={values[name] ?? ""}
                    onChange={(e) => setValues({ ...values, [name]: e.target.value })}
                    aria-invalid={fieldErrors[name] ? true : undefined}
                    aria-describedby={fieldErrors[name] ? errorId : undefined}
                  />
                </label>
                {field.description && <div className="muted">{field.description}</div>}
                {fieldErrors[name] && (
                  <div id={errorId} className="error" role="alert">
                    {name}: {fieldErrors[name]}
                  </div>
                )}
              </div>
            );
          })}
          {fieldErrors._ && <ErrorNote message={fieldErrors._} />}
        </fieldset>
        <button type="submit" className="primary" disabled={create.isPending}>
          Create job
        </button>
        {create.error ? <ErrorNote error={create.error} /> : null}
      </form>
    </>
  );
}

/** How many matches the picker offers as the person types. */
const PICK_LIMIT = 10;

/** Devices picked by name: type part of a name, pick from the matches, remove any picked. */
function DevicePicker({ chosen, onChange }: { chosen: string[]; onChange(names: string[]): void }) {
  const [text, setText] = useState("");
  const typed = text.trim();
  const matches = useQuery({
    queryKey: ["device-pick", typed],
    queryFn: () =>
      api<DeviceBriefList>(`/api/v1/devices${query({ name: typed, sort: "name", brief: true, limit: PICK_LIMIT })}`),
    enabled: typed.length > 0,
    placeholderData: keepPreviousData,
  });
  const offered = typed ? (matches.data?.items ?? []).filter((d) => !chosen.includes(d.name)) : [];
  return (
    <fieldset className="picker">
      <legend>Devices (one site)</legend>
      {chosen.length ? (
        <ul className="chosen" aria-label="Chosen devices">
          {chosen.map((name) => (
            <li key={name}>
              {name}{" "}
              <button
                type="button"
                aria-label={`Remove ${name}`}
                onClick={() => onChange(chosen.filter((n) => n !== name))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">No device chosen yet.</p>
      )}
      <label>
        Find devices by name
        <input type="search" value={text} onChange={(e) => setText(e.target.value)} maxLength={200} />
      </label>
      {matches.error ? <ErrorNote error={matches.error} /> : null}
      {typed && matches.data && (
        <ul className="matches" aria-label="Matching devices">
          {offered.map((d) => (
            <li key={d.id}>
              <button type="button" onClick={() => onChange([...chosen, d.name])}>
                Add {d.name}
              </button>{" "}
              <span className="muted">
                {d.site.slug}, {d.operationalStatus}
              </span>
            </li>
          ))}
          {matches.data.count > PICK_LIMIT && (
            <li className="muted">{formatCount(matches.data.count)} match; type more of the name to narrow them.</li>
          )}
          {!offered.length && <li className="muted">No other device matches.</li>}
        </ul>
      )}
    </fieldset>
  );
}
