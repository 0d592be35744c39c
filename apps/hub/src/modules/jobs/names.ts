/**
 * Human-readable job names, as operators say them on a call: `enrol-brisk-falcon-3fa2`.
 * Kind, two words and four hex digits: 2,500 word pairs × 65,536 suffixes per kind, so a
 * collision (the unique index refuses it) is rare and simply retried with a new name.
 */
import { randomBytes, randomInt } from "node:crypto";
import type { JobKind } from "@fm/domain";

const ADJECTIVES = ["amber", "bold", "brisk", "calm", "clever", "crisp", "daring", "eager", "fair", "fleet", "gentle", "glad", "golden", "grand", "hardy", "keen", "kind", "lively", "lucid", "merry", "mighty", "noble", "plucky", "proud", "quick", "quiet", "rapid", "ready", "regal", "robust", "rosy", "sharp", "shiny", "silent", "sleek", "smart", "snowy", "solid", "steady", "stout", "sunny", "swift", "tidy", "tranquil", "true", "vivid", "warm", "wise", "witty", "zesty"];
const NOUNS = ["badger", "beacon", "birch", "cedar", "comet", "condor", "coral", "crane", "delta", "ember", "falcon", "fjord", "glacier", "harbor", "hawk", "heron", "ibex", "island", "jaguar", "kestrel", "lagoon", "lark", "lynx", "maple", "meadow", "meteor", "nebula", "orca", "osprey", "otter", "panda", "pine", "quartz", "raven", "reef", "river", "sequoia", "sparrow", "summit", "tern", "tiger", "tundra", "valley", "walrus", "willow", "wolf", "yak", "zebra", "aurora", "basalt"];

export function jobName(kind: JobKind): string {
  return `${kind.toLowerCase().replace(/_/g, "-")}-${ADJECTIVES[randomInt(ADJECTIVES.length)]}-${NOUNS[randomInt(NOUNS.length)]}-${randomBytes(2).toString("hex")}`;
}
