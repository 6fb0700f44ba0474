// The one rule for keeping secrets out of what railyard writes (recordings and the log): every
// credential value railyard was configured with (keys, secrets, subscription keys, callback
// tokens), and its base64 form, is replaced wherever it appears; so is anything shaped like a
// secret railyard hands out (sk_/sig_ keys, whsec_ webhook secrets, cbt_ callback tokens) and the
// credentials of an Authorization header or a URL. Writers never copy headers or bodies anyway:
// this is the last guard.

export const REDACTED = '[redacted]';

/** Secrets by their shape: those issued at run time, which no configuration lists. */
const SHAPES: readonly [RegExp, string][] = [
  [/\b(?:sk|sig)_(?:test|live)_[A-Za-z0-9_]+/g, REDACTED],
  [/\bwhsec_[A-Za-z0-9+/=]+/g, REDACTED],
  [/\bcbt_[A-Za-z0-9]+/g, REDACTED],
  // An Authorization header's credentials (not an English word: "Basic authentication failed").
  [/\b(Bearer|Basic) (?![a-z]+(?![A-Za-z0-9._~+/=-]))[A-Za-z0-9._~+/=-]{8,}/g, `$1 ${REDACTED}`],
  // https://user:password@host
  [/(\/\/)[^/\s:@]+:[^/\s@]+@/g, `$1${REDACTED}@`],
];

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class Redactor {
  private readonly secrets: string[];
  /**
   * Matches wherever any secret or shape would: most text (every log line of a busy advance) has
   * none, and one scan of it is cheaper than a split per secret and a pass per shape.
   */
  private readonly anything: RegExp;

  /** Short values are left alone: redacting "1" would shred every number in a file. */
  constructor(secrets: readonly string[]) {
    const values = [...new Set(secrets.filter((s) => s.length >= 6))];
    const encoded = values.map((s) => Buffer.from(s).toString('base64').replace(/=+$/, '')).filter((s) => s.length >= 8);
    // Longest first, so a secret that contains another is replaced whole.
    this.secrets = [...values, ...encoded].sort((a, b) => b.length - a.length);
    this.anything = new RegExp([...this.secrets.map(escapeRegExp), ...SHAPES.map(([shape]) => shape.source)].map((p) => `(?:${p})`).join('|'));
  }

  text(input: string): string {
    if (!this.anything.test(input)) return input;
    let out = input;
    for (const secret of this.secrets) out = out.split(secret).join(REDACTED);
    for (const [shape, replacement] of SHAPES) out = out.replace(shape, replacement);
    return out;
  }
}
