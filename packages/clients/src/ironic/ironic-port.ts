/**
 * Ironic ports (a node's NICs), as `GET/POST /v1/ports` and `PATCH /v1/ports/{uuid}` carry them
 * at microversion 1.82 (Ironic API reference, "Ports": https://docs.openstack.org/api-ref/baremetal/#ports-ports;
 * ironic/api/controllers/v1/port.py at 21.4). Ironic stores the address in lower case, answers
 * 409 "A port with MAC address … already exists." for a MAC any port of any node holds, and
 * wants `switch_id` (a MAC or an OpenFlow datapath id) and `port_id` in a `local_link_connection`.
 */
import { z } from "zod";

export const IronicLocalLinkSchema = z.looseObject({
  switch_id: z.string().optional(),
  port_id: z.string().optional(),
  switch_info: z.string().optional(),
});
export type IronicLocalLink = z.infer<typeof IronicLocalLinkSchema>;

export const IronicPortSchema = z.looseObject({
  uuid: z.string(),
  address: z.string(),
  node_uuid: z.string(),
  pxe_enabled: z.boolean(),
  local_link_connection: IronicLocalLinkSchema,
  physical_network: z.string().nullable().optional(), // 1.34
  extra: z.record(z.string(), z.unknown()),
});
export type IronicPort = z.infer<typeof IronicPortSchema>;

export const IronicPortPageSchema = z.looseObject({ ports: z.array(IronicPortSchema), next: z.string().optional() });

/** What creating a port sends; the node's ports are looked up first (creating is not retried). */
export interface IronicPortCreate {
  address: string;
  node_uuid: string;
  pxe_enabled: boolean;
  local_link_connection?: IronicLocalLink;
  extra?: Record<string, unknown>;
}
