import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../runtime/config.ts";
import { workflowAgentEnv } from "./agent.ts";

const base = {
  FM_HUB_URL: "http://hub:8080/",
  FM_CLIENT_ID: "workflow-agent-sys1-osl1",
  FM_CLIENT_SECRET: "s3cret-value",
  FM_SITE: "oslo",
};

describe("workflow agent configuration", () => {
  it("takes an http(s) log explorer link with {jobId}, and refuses any other scheme naming the variable", () => {
    const grafana = "https://grafana.osl1.example/explore?left=%7B%22expr%22%3A%22{jobId}%22%7D";
    expect(loadConfig(workflowAgentEnv, { ...base, FM_LOGS_EXPLORER_URL: grafana }).FM_LOGS_EXPLORER_URL).toBe(grafana);
    for (const bad of ["javascript:alert(1)", "data:text/html,x", "file:///var/log/fm", "vbscript:x"]) {
      const load = () => loadConfig(workflowAgentEnv, { ...base, FM_LOGS_EXPLORER_URL: bad });
      expect(load, bad).toThrow(ConfigError);
      expect(load, bad).toThrow(/FM_LOGS_EXPLORER_URL/);
    }
  });
});
