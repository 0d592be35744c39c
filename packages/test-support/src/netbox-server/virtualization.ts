/**
 * Virtualization clusters. Full representation: SOURCES.md S1 `Cluster.md` (4.2's
 * `scope_type`/`scope_id`/`scope` in place of `site`) (fixture cluster.json).
 */
import { CLUSTER_STATUS, choice } from "./choices.ts";
import { endpoint, type Endpoint } from "./endpoint.ts";
import { choices, exact, modelIds, numbers, sitesOf, updated } from "./filters.ts";
import { briefClusterType, briefSite, customFields, nestedTags } from "./nested.ts";
import type { ClusterRecord } from "./store.ts";
import type { Json, View } from "./view.ts";

function renderCluster(v: View, c: ClusterRecord): Json {
  const type = v.clusterType(c.type);
  const site = c.site != null ? v.site(c.site) : undefined;
  return {
    id: c.id,
    url: v.api(`virtualization/clusters/${c.id}/`),
    display_url: v.ui(`virtualization/clusters/${c.id}/`),
    display: c.name,
    name: c.name,
    type: type ? briefClusterType(v, type) : null,
    group: null,
    status: choice(CLUSTER_STATUS, c.status),
    tenant: null,
    scope_type: site ? "dcim.site" : null,
    scope_id: site ? site.id : null,
    scope: site ? briefSite(v, site) : null,
    description: c.description,
    owner: null,
    comments: "",
    tags: nestedTags(v, c.tags),
    custom_fields: customFields(v, "virtualization.cluster", c.custom_fields),
    created: c.created,
    last_updated: c.last_updated,
    device_count: v.count("devicesPerCluster", v.data.devices, (d) => d.cluster).get(c.id) ?? 0,
    virtualmachine_count: 0,
    allocated_vcpus: null,
    allocated_memory: null,
    allocated_disk: null,
  };
}

export const virtualizationEndpoints: Array<Endpoint<{ id: number }>> = [
  endpoint<ClusterRecord>({
    path: "virtualization/clusters",
    objectType: "virtualization.cluster",
    objectName: "Cluster",
    rows: (d) => d.clusters,
    render: renderCluster,
    filters: {
      id: numbers("id", (r) => r.id),
      name: exact((r) => r.name),
      site_id: modelIds("site_id", sitesOf, (r) => r.site),
      type_id: modelIds(
        "type_id",
        (v) => v.data.clusterTypes,
        (r) => r.type,
      ),
      status: choices("status", CLUSTER_STATUS, (r) => r.status),
      ...updated<ClusterRecord>(),
    },
  }),
];
