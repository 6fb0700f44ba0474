import { html, type Html } from '../html.ts';

/** What an object id looks like (chg_…, trf_…, trd_…, qt_…, col_…, po_…, bil_…, evt_…, wd_…). */
export const OBJECT_ID = /^[a-z]{2,4}_[0-9a-z]{6,40}$/;

/** A link to an object's page (its timeline), or a dash when there is none. */
export function objectHref(id: string | null | undefined): Html {
  return id ? html`<a href="/dashboard/objects/${id}">${id}</a>` : html`—`;
}
