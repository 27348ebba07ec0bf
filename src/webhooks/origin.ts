// The origin a delivery is limited by (deliver.ts): the URL's scheme, host and port as WHATWG URL
// serialises them, so `https://A.example:443/x` and `https://a.example/y` share one. A URL that does
// not parse (the egress check refuses it at the try) is its own origin.
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
