import { describe, expect, it } from "vitest";
import { IronicApiError } from "./ironic-errors.ts";
import { pageByMarker } from "./paging.ts";

interface Item {
  uuid: string;
}
const item = (uuid: string): Item => ({ uuid });

/** A pager over canned pages, recording the markers it was asked with. */
function pager(pages: Record<string, { items: Item[]; next?: string }>, limit = 2) {
  const asked: Array<string | undefined> = [];
  const run = pageByMarker<Item>({
    path: "/v1/nodes",
    limit,
    page: async (marker) => {
      asked.push(marker);
      const page = pages[marker ?? ""];
      if (!page) throw new Error(`no page after ${marker}`);
      return { ...page, status: 200, text: `page after ${marker ?? "none"}` };
    },
    markerOf: (i) => i.uuid,
  });
  return { run, asked };
}

describe("pageByMarker", () => {
  it("follows next's marker (not its URL) to the end", async () => {
    const { run, asked } = pager({
      "": { items: [item("a"), item("b")], next: "http://10.0.0.1:6385/v1/nodes?limit=2&marker=b" },
      b: { items: [item("c"), item("d")], next: "/v1/nodes?limit=2&marker=d" },
      d: { items: [item("e")] },
    });
    expect((await run).map((i) => i.uuid)).toEqual(["a", "b", "c", "d", "e"]);
    expect(asked).toEqual([undefined, "b", "d"]);
  });

  it("follows a full page without next with its last item; a short one ends", async () => {
    const { run, asked } = pager({ "": { items: [item("a"), item("b")] }, b: { items: [item("c")] } });
    expect((await run).map((i) => i.uuid)).toEqual(["a", "b", "c"]);
    expect(asked).toEqual([undefined, "b"]);
  });

  it("takes the last item when next has no marker, and stops at an empty page", async () => {
    const { run, asked } = pager({ "": { items: [item("a")], next: "/v1/ports?limit=2" }, a: { items: [] } });
    expect((await run).map((i) => i.uuid)).toEqual(["a"]);
    expect(asked).toEqual([undefined, "a"]);
  });

  it("stops with an IronicApiError naming the path when a marker repeats, instead of looping", async () => {
    const { run, asked } = pager({
      "": { items: [item("a"), item("b")], next: "/v1/nodes?marker=b" },
      b: { items: [item("c"), item("d")], next: "/v1/nodes?marker=b" },
    });
    const err = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(IronicApiError);
    expect(err).toMatchObject({
      message: "GET /v1/nodes: pagination does not advance (marker b repeated)",
      status: 200,
      body: "page after b",
    });
    expect(asked).toEqual([undefined, "b"]);
  });

  it("stops when a proxy serves the same full page again and again", async () => {
    const { run, asked } = pager({ "": { items: [item("a"), item("b")] }, b: { items: [item("a"), item("b")] } });
    await expect(run).rejects.toThrow("marker b repeated");
    expect(asked).toEqual([undefined, "b"]);
  });
});
