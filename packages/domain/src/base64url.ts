/**
 * base64url (RFC 4648 section 5, unpadded) of UTF-8 text, with the platform's btoa/atob and
 * TextEncoder/TextDecoder, which browsers and Node both have: the domain runs in both.
 */
export function encodeBase64Url(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The text of a base64url string; throws on characters outside the alphabet. */
export function decodeBase64Url(encoded: string): string {
  const binary = atob(encoded.replace(/-/g, "+").replace(/_/g, "/"));
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

/** How many bytes a canonical (padded) base64 string decodes to, without decoding it. */
export function base64DecodedLength(encoded: string): number {
  const padding = encoded.endsWith("==") ? 2 : encoded.endsWith("=") ? 1 : 0;
  return (encoded.length / 4) * 3 - padding;
}
