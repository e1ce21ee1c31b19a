/**
 * Leak checks for the secrets tests: every form a secret can take on its way out,
 * computed here independently of the redactor under test (`src/util/redact.ts`), so a
 * form the redactor forgets is a failing test, not a shared blind spot.
 *
 * @module
 */

/** Base64 of the UTF-8 bytes of `text`, without padding. */
export function base64(text: string): string {
  let binary = "";
  for (const b of new TextEncoder().encode(text)) binary += String.fromCharCode(b);
  return btoa(binary).replace(/=+$/, "");
}

/** Form-urlencoding (`+` for a space). */
export function formEncode(text: string): string {
  return new URLSearchParams([["", text]]).toString().slice(1);
}

/**
 * A secret in every form it may be printed in: as is, URL-encoded (`%20` and `+`
 * styles), JSON-escaped, and base64 (standard and URL-safe). Forms shorter than 8
 * characters are left out: they may legitimately occur inside other words.
 */
export function secretForms(secret: string): string[] {
  const b64 = base64(secret);
  const forms = [
    secret,
    encodeURIComponent(secret),
    formEncode(secret),
    JSON.stringify(secret).slice(1, -1),
    b64,
    b64.replaceAll("+", "-").replaceAll("/", "_"),
  ];
  return [...new Set(forms)].filter((f) => f.length >= 8);
}

/** HTTP Basic credentials as sent: `base64(id:secret)`, raw and form-encoded first. */
export function basicForms(id: string, secret: string): string[] {
  return [
    ...new Set([base64(`${id}:${secret}`), base64(`${formEncode(id)}:${formEncode(secret)}`)]),
  ];
}

/** Where any form of any of `secrets` occurs in `text` (labelled with `where`). */
export function findLeaks(
  where: string,
  text: string,
  secrets: Map<string, string[]>,
): string[] {
  const leaks: string[] = [];
  for (const [name, forms] of secrets) {
    for (const form of forms) {
      if (text.includes(form)) leaks.push(`${where}: ${name} as ${JSON.stringify(form)}`);
    }
  }
  return leaks;
}
