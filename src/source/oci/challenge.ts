// WWW-Authenticate challenges (RFC 9110 §11.6.1), as registries send them on a 401.

/** One challenge of a WWW-Authenticate header: lower-cased scheme, parameters by lower-cased name. */
export interface AuthChallenge {
  scheme: string;
  params: Map<string, string>;
}

/**
 * Parses a WWW-Authenticate value (RFC 9110 challenges, several possibly joined by ", ") into
 * challenges: `Bearer realm="https://auth/token",service="reg",scope="repository:a:pull,push"`
 * → [{ scheme: "bearer", params: realm, service, scope }]. Quoted values may hold commas and
 * backslash escapes; malformed trailing input is ignored.
 */
export function parseChallenges(header: string): AuthChallenge[] {
  const out: AuthChallenge[] = [];
  const tokenRe = /[!#$%&'*+.^_`|~0-9A-Za-z-]+/y;
  let i = 0;
  const skip = (chars: RegExp) => {
    while (i < header.length && chars.test(header[i] ?? "")) i++;
  };
  const readToken = (): string | undefined => {
    tokenRe.lastIndex = i;
    const m = tokenRe.exec(header);
    if (!m) return undefined;
    i = tokenRe.lastIndex;
    return m[0];
  };
  let current: AuthChallenge | undefined;
  while (i < header.length) {
    skip(/[\s,]/);
    const word = readToken();
    if (word === undefined) break;
    skip(/[ \t]/);
    if (header[i] === "=" && current !== undefined) {
      // An auth-param of the current challenge. (token68 credentials, "Negotiate abc==", are
      // not needed here and parse as junk parameters.)
      i++;
      skip(/[ \t]/);
      let value = "";
      if (header[i] === '"') {
        i++;
        while (i < header.length && header[i] !== '"') {
          if (header[i] === "\\" && i + 1 < header.length) i++;
          value += header[i];
          i++;
        }
        i++;
      } else {
        value = readToken() ?? "";
      }
      current.params.set(word.toLowerCase(), value);
      continue;
    }
    if (header[i] === "=") break; // a parameter before any scheme: malformed
    current = { scheme: word.toLowerCase(), params: new Map() };
    out.push(current);
  }
  return out;
}
