import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

// The stylesheets and browser scripts railyard serves: each a real file under src/**/assets/,
// served at its URL with its content type and caching header.

export interface ServedAsset {
  url: string;
  /** Relative to the project's root. */
  file: string;
  contentType: string;
  cacheControl: string;
}

export const SERVED_ASSETS: readonly ServedAsset[] = [
  { url: '/dashboard/assets/dashboard.css', file: 'src/dashboard/assets/dashboard.css', contentType: 'text/css; charset=utf-8', cacheControl: 'no-store' },
  { url: '/dashboard/assets/dashboard.js', file: 'src/dashboard/assets/dashboard.js', contentType: 'text/javascript; charset=utf-8', cacheControl: 'no-store' },
  { url: '/pay/_assets/checkout.css', file: 'src/payment-links/assets/checkout.css', contentType: 'text/css; charset=utf-8', cacheControl: 'public, max-age=300' },
  { url: '/pay/_assets/checkout.js', file: 'src/payment-links/assets/checkout.js', contentType: 'text/javascript; charset=utf-8', cacheControl: 'public, max-age=300' },
];

export const PROJECT_ROOT = resolve(import.meta.dirname, '../..');

export const assetText = (asset: ServedAsset): string => readFileSync(resolve(PROJECT_ROOT, asset.file), 'utf8');
