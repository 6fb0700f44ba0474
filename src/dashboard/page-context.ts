import type { Request, Response } from 'express';
import type { ApiAnswer, ApiCall, DashboardApi } from './dashboard-api.ts';
import type { PageName } from './dashboard-layout.ts';
import type { DashboardSession, Flash, SessionKey } from './dashboard-sessions.ts';
import type { Html } from './html.ts';

/** What a page handler gets: the signed-in session, its current key, and the API. */
export interface PageContext {
  req: Request;
  res: Response;
  session: DashboardSession;
  key: SessionKey;
  /** Calls as the session's current key. */
  call: ApiCall;
  api: DashboardApi;
  render(opts: { title: string; page?: PageName; status?: number; flash?: Flash | null }, content: Html): void;
  /** Redirects (303) after an action, with a message for the next page. */
  done(location: string, flash: Flash): void;
  /** The API's refusal as a message. */
  refusal(answer: ApiAnswer, what: string): Flash;
}

export type PageHandler = (ctx: PageContext) => Promise<void>;

/** How the pages register themselves; testOnly pages and actions answer 403 to a live session. */
export interface DashboardRoutes {
  /** A GET for a signed-in session; anyone else is sent to the sign-in page. */
  page(path: string, handler: PageHandler, opts?: { testOnly?: boolean }): void;
  /** A form POST: refused (403, nothing done) without the session's CSRF token. */
  action(path: string, handler: PageHandler, opts?: { testOnly?: boolean }): void;
}

/** A page (or a family of pages): registers its GETs and form POSTs on the dashboard's routes. */
export type DashboardPage = (routes: DashboardRoutes) => void;
