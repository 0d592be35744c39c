import type { NetboxSettingsInput } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";

export type NetboxSettingsRow = Prisma.NetboxSettingsGetPayload<object>;

/** The only place that reads or writes the netbox_settings row (id 1). */
export const netboxSettingsRepo = {
  async get(db: Db): Promise<NetboxSettingsRow | null> {
    return db.netboxSettings.findUnique({ where: { id: 1 } });
  },

  /** Reads the row and locks it for the rest of the transaction (creating it when missing). */
  async lock(db: Db): Promise<NetboxSettingsRow> {
    await db.netboxSettings.createMany({ data: [{ id: 1 }], skipDuplicates: true });
    await db.$queryRaw`SELECT id FROM netbox_settings WHERE id = 1 FOR UPDATE`;
    return (await db.netboxSettings.findUnique({ where: { id: 1 } }))!;
  },

  async save(
    db: Db,
    settings: NetboxSettingsInput,
    version: number,
    configured?: NetboxSettingsInput,
  ): Promise<NetboxSettingsRow> {
    return db.netboxSettings.update({
      where: { id: 1 },
      data: {
        deviceFilters: settings.deviceFilters,
        deviceRoleClassMapping: settings.deviceRoleClassMapping,
        version,
        updatedAt: new Date(),
        ...(configured ? { configured } : {}),
      },
    });
  },
};
export type NetboxSettingsRepo = typeof netboxSettingsRepo;
