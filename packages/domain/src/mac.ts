/**
 * A MAC address in one canonical form, `AA:BB:CC:DD:EE:FF`: how NetBox stores and filters it
 * (its MACAddressField's `mac_unix_expanded_uppercase` dialect) and how the hub keeps it. Ironic
 * takes the same in lower case. Accepts colons, dashes, dots or none between the digits; null for
 * anything that is not 12 hexadecimal digits.
 */
export function canonicalMac(mac: string): string | null {
  const hex = mac.trim().replace(/[-:.\s]/g, "");
  return /^[0-9a-fA-F]{12}$/.test(hex) ? hex.toUpperCase().match(/../g)!.join(":") : null;
}
