// The caller's locale from Accept-Language: the tag with the highest weight (first on ties);
// `en` when the header is absent, malformed, or only `*`.
const TAG = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/;

export function localeFromAcceptLanguage(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!value) return 'en';
  let best: { tag: string; q: number } | null = null;
  for (const part of value.split(',').slice(0, 32)) {
    const [rawTag, ...params] = part.trim().split(';');
    const tag = rawTag?.trim() ?? '';
    if (!TAG.test(tag)) continue;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([01](\.\d{0,3})?)\s*$/.exec(p);
      if (m) q = Number(m[1]);
    }
    if (q > 0 && (!best || q > best.q)) best = { tag, q };
  }
  return best?.tag ?? 'en';
}
