import { defineProvider } from '../define-provider.ts';
import { CardProcessorAdapter } from './adapter.ts';
import { cardProcessorMock } from './mock.ts';
import { cardProcessorOptions } from './options.ts';

export const cardProcessor = defineProvider({
  options: cardProcessorOptions,
  adapter: (o, ctx) => new CardProcessorAdapter({ baseUrl: o.base_url, apiKey: o.api_key, webhookSecret: o.webhook_secret }, ctx),
  mock: cardProcessorMock,
  examples: {
    match: { card: '4242424242424242' },
    collect: (reference) => ({ reference, amount: 1500, currency: 'GHS', channel: 'card', card: { number: '4242424242424242' }, description: 'contract' }),
  },
});
