// Keeps credentials out of a recording: headers that carry them are blanked, and every known
// secret value (keys, passwords, callback tokens), wherever it appears, is replaced.

export const REDACTED = '[redacted]';

const SECRET_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'ocp-apim-subscription-key',
  'x-api-key',
  'api-key',
  'apikey',
  'x-signature',
  'x-participant-id',
  'x-paystack-signature',
]);

const SECRET_FIELDS = /("(?:access_token|refresh_token|token|apiKey|api_key|client_secret|clientSecret|password|secret)"\s*:\s*)"[^"]*"/g;

export class Redactor {
  private readonly secrets: string[];

  /** Short values are left alone: redacting "1" would shred every number in a file. */
  constructor(secrets: readonly string[]) {
    this.secrets = [...new Set(secrets.filter((s) => s.length >= 6))].sort((a, b) => b.length - a.length);
  }

  text(input: string): string {
    let out = input.replace(SECRET_FIELDS, `$1"${REDACTED}"`);
    for (const secret of this.secrets) out = out.split(secret).join(REDACTED);
    // Basic credentials are user:password in base64: their encoded form is a secret too.
    for (const secret of this.secrets) {
      const encoded = Buffer.from(secret).toString('base64').replace(/=+$/, '');
      if (encoded.length >= 8) out = out.split(encoded).join(REDACTED);
    }
    return out;
  }

  headers(input: Record<string, string>): Record<string, string> {
    return Object.fromEntries(Object.entries(input).map(([name, value]) => [name, SECRET_HEADERS.has(name.toLowerCase()) ? REDACTED : this.text(value)]));
  }
}
