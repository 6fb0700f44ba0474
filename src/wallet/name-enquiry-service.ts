import type { AuthContext } from '../auth/api-key-service.ts';
import { NotFoundError } from '../kernel/errors.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import { RailError } from '../rails/provider-port.ts';
import type { RailRouter } from '../rails/rail-router.ts';
import { resolveNetwork } from '../kernel/msisdn.ts';
import type { z } from 'zod';
import type { nameResolutionSchema } from './wallet.schemas.ts';

type NameResolution = z.infer<typeof nameResolutionSchema>;

/** Name enquiry over the rails; moves no money. */
export class NameEnquiryService {
  constructor(private readonly deps: { router: RailRouter; ids: IdGenerator }) {}

  async momo(auth: AuthContext, input: { msisdn: string; network?: 'MTN' | 'TELECEL' | 'AT' }): Promise<NameResolution> {
    const { msisdn, network } = resolveNetwork(input.msisdn, input.network);
    const found = await this.lookup(auth, 'momo', network, (p) => p.resolveName({ channel: 'momo', msisdn, network }));
    if (!found.result) throw new NotFoundError(`No mobile-money wallet found for ${input.msisdn}`, { msisdn });
    return { name: found.result.name, instrument: msisdn, channel: 'momo', provider: found.provider.name, network };
  }

  async bank(auth: AuthContext, input: { account_number: string; bank_code: string }): Promise<NameResolution> {
    const found = await this.lookup(auth, 'bank', undefined, (p) => p.resolveName({ channel: 'bank', accountNumber: input.account_number, bankCode: input.bank_code }));
    if (!found.result) {
      throw new NotFoundError(`No account ${input.account_number} found at bank ${input.bank_code}`, { account_number: input.account_number, bank_code: input.bank_code });
    }
    return { name: found.result.name, instrument: input.account_number, channel: 'bank', provider: found.provider.name, bank_code: input.bank_code };
  }

  private async lookup(auth: AuthContext, channel: 'momo' | 'bank', network: 'MTN' | 'TELECEL' | 'AT' | undefined, call: Parameters<RailRouter['route']>[1]) {
    try {
      return (await this.deps.router.route({ environment: auth.environment, channel, network, operation: 'resolve', refType: 'name_enquiry', refId: this.deps.ids.next('ne') }, call)) as {
        provider: { name: string };
        result: { name: string } | null;
      };
    } catch (err) {
      // A provider refusing the enquiry on its merits is, to the merchant, an account that does not resolve.
      if (err instanceof RailError) throw new NotFoundError('The provider could not resolve this account', { provider_code: err.detail.providerCode ?? null });
      throw err;
    }
  }
}
