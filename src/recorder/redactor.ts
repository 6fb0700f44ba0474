// The last guard on what a recording writes: every credential value railyard was configured
// with (keys, secrets, subscription keys, callback tokens), and its base64 form, is replaced
// wherever it appears. The writer itself never copies headers or bodies.

export const REDACTED = '[redacted]';

export class Redactor {
  private readonly secrets: string[];

  /** Short values are left alone: redacting "1" would shred every number in a file. */
  constructor(secrets: readonly string[]) {
    const values = [...new Set(secrets.filter((s) => s.length >= 6))];
    const encoded = values.map((s) => Buffer.from(s).toString('base64').replace(/=+$/, '')).filter((s) => s.length >= 8);
    // Longest first, so a secret that contains another is replaced whole.
    this.secrets = [...values, ...encoded].sort((a, b) => b.length - a.length);
  }

  text(input: string): string {
    let out = input;
    for (const secret of this.secrets) out = out.split(secret).join(REDACTED);
    return out;
  }
}
