/**
 * A webhook endpoint for tests: verifies Standard Webhooks signatures (401 when wrong), stores
 * the records of each batch de-duplicated by `recordId`, and refuses poison records with 422.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { InventoryRecordSchema, type InventoryRecord } from "@fm/domain";
import { secretKey, verify } from "../sink/standard-webhooks.ts";

export class WebhookReceiver {
  readonly stored = new Map<string, InventoryRecord>();
  duplicates = 0;
  badSignatures = 0;
  private server: Server | undefined;

  constructor(
    readonly secret: string,
    private readonly poison: (r: InventoryRecord) => boolean = () => false,
  ) {}

  url = "";

  async start(): Promise<void> {
    const key = secretKey(this.secret);
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        const h = (n: string) => req.headers[n] as string | undefined;
        if (
          !verify(
            key,
            { id: h("webhook-id"), timestamp: h("webhook-timestamp"), signature: h("webhook-signature") },
            body,
          )
        ) {
          this.badSignatures++;
          return void res.writeHead(401).end("bad signature");
        }
        const records = (JSON.parse(body) as { data: { records: unknown[] } }).data.records.map((r) =>
          InventoryRecordSchema.parse(r),
        );
        if (records.some(this.poison)) return void res.writeHead(422).end("record refused");
        for (const r of records) {
          if (this.stored.has(r.recordId)) this.duplicates++;
          else this.stored.set(r.recordId, r);
        }
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/fleet`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }
}
