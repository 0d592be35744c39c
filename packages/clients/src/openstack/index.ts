/** OpenStack: clouds.yaml, Keystone application credentials, and an IronicClient for a cloud. */
export * from "./clouds-yaml.ts";
export * from "./keystone.ts";
export * from "./openstack-auth.ts";
