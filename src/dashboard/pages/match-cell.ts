import { html, type Html } from '../html.ts';

/** Which scenario rule a provider mock call matched, or the nearest one and why it failed. */
export type ScenarioMatch =
  | null
  | { matched: true; file: string; rule_index: number; rule_name: string }
  | { matched: false; nearest: { file: string; rule_index: number; rule_name: string } | null; failed: string };

export function matchCell(match: ScenarioMatch): Html {
  if (!match) return html`—`;
  if (match.matched) return html`<span class="match ok">matched <code>${match.file}</code> #${match.rule_index} ${match.rule_name}</span>`;
  return html`<span class="match none"><strong>no rule matched</strong>${match.nearest ? html`; nearest <code>${match.nearest.file}</code> #${match.nearest.rule_index} ${match.nearest.rule_name}` : ''}<br><span class="failed">${match.failed}</span></span>`;
}
