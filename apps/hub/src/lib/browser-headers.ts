/**
 * What every page the hub serves a browser carries (the web UI under /ui, Swagger UI under
 * /docs): a Content-Security-Policy that loads scripts, styles and fonts from the hub only, lets
 * the page talk to the hub only, and lets no other origin frame it (clickjacking); no MIME
 * sniffing; no referrer leaving the hub; a browsing context of its own.
 */
export function contentSecurityPolicy(o: { inlineStyles?: boolean } = {}): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    o.inlineStyles ? "style-src 'self' 'unsafe-inline'" : "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * The headers of every browser page the hub serves, the policy included. `inlineStyles`: the page
 * sets style attributes (Swagger UI does); styles cannot run code, scripts stay 'self' only.
 */
export function browserPageHeaders(o: { inlineStyles?: boolean } = {}): Record<string, string> {
  return {
    "content-security-policy": contentSecurityPolicy(o),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
  };
}
