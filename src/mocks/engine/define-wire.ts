import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { z } from 'zod';
import { parseJsonObject } from '../../kernel/json-object.ts';
import type { MockQuery, WireRefusals } from './behaviour.ts';
import type { Outcome, TransactionWire } from './callback-plan.ts';
import type { CallbackSigner } from './callback-sender.ts';
import type { MockContext } from './mock-context.ts';
import { MockEngine, type TakeCall } from './mock-engine.ts';
import type { MockTransactionBook } from './mock-transaction-book.ts';
import { WIRE_ROUTE_LOCAL, wireResponseLog } from './wire-response-log.ts';

// A wire module, declared: its error body, its auth, its books and its operations. The engine
// owns the pipeline around them (after mountebank's): the router, the body parser, the outage
// gate, auth, zod parsing mapped to the wire's own error body, the route-not-found and internal
// error answers, persistence and lookups through the books, and every callback. What is left to
// the wire module is its upstream's tables, codes and body builders.

/** An error in the upstream's words: the wire's `errors.send` writes it. */
export interface WireError {
  status: number;
  code: string;
  message: string;
  /** More fields of the error body (an existing charge's id, the offending parameter). */
  extra?: Record<string, unknown>;
  /** Response headers that go with it (a Basic challenge); the engine sets them. */
  headers?: Record<string, string>;
}

/** How the upstream words its errors, and which it gives for what the engine answers. */
export interface WireErrors {
  /** Writes an error body in the upstream's format. */
  send(res: Response, error: WireError): void;
  /** While the provider is marked down, before anything else. */
  outage: WireError;
  /**
   * A body the wire cannot take: no JSON object, unreadable (the body parser's 4xx, with its
   * status and its error type, e.g. 'entity.parse.failed'), or the first problem the operation's schema found (its message, the path of the
   * field, e.g. ['card', 'number'], and the body as sent, for an upstream that echoes a field of it).
   */
  invalid(
    problem: { kind: 'not_an_object' } | { kind: 'unreadable'; status: number; type?: string } | { kind: 'schema'; message: string; path: readonly PropertyKey[]; input: Record<string, unknown> },
  ): WireError;
  /**
   * No operation has this method and path. Omitted: such a request leaves the mock (the app
   * answers it), and the outage gate and the wire's auth run on the wire's own operations only.
   */
  notFound?: WireError;
  /** The mock itself failed (logged). */
  internal: WireError;
}

/** What an operation's parts are given. */
export interface WireCall<Settings, Body = unknown, Instance = unknown> {
  req: Request;
  res: Response;
  params: Record<string, string>;
  body: Body;
  settings: Settings;
  ctx: MockContext;
  /** What this mock instance keeps besides its books (WireDefinition.instance). */
  instance: Instance;
  /** The wire's books by name: every read is one statement by key (`get`) or lookup key (`find`). */
  books: Record<string, MockTransactionBook<any>>;
  /** Settles a kept transaction now, through the engine, as its settlement job would. */
  answer<T>(book: string, reference: string, outcome: Outcome): Promise<T | undefined>;
  /** A call that keeps nothing (a name enquiry), through the engine: null when it has answered (see MockEngine.lookup). */
  lookup: MockEngine['lookup'];
  /** Answers with the wire's error body. */
  fail(error: WireError): void;
  /** The operation's reference as its header carried it ('' when the operation declares none). */
  reference: string;
}

/** Credentials, checked before anything of the body is read: null when right, else the error to answer. */
export type WireAuth<Settings> = (req: Request, settings: Settings, ctx: MockContext, instance: any) => WireError | null | Promise<WireError | null>;

/** A reference the upstream takes from a header (MTN's X-Reference-Id), checked before the body. */
export interface HeaderReference {
  header: string;
  valid(value: string): boolean;
  invalid: WireError;
}

/** What every operation may declare besides its route. */
interface OperationBase<Settings> {
  /** This operation's own credentials, checked after the wire's (an upstream whose products have their own keys). */
  auth?: WireAuth<Settings>;
}

/** A collect or payout: the engine takes it (rules, behaviours, the book, the callback plan). */
export interface TakeOperation<Settings, Body, T> extends OperationBase<Settings> {
  method: 'post' | 'put';
  path: string;
  body: z.ZodType<Body>;
  /** Where the upstream's reference comes from when a header carries it (the call's `reference`). */
  reference?: HeaderReference;
  /** The status of "accepted" (and of a malformed answer's HTML body). */
  successStatus: number;
  /**
   * The book, the upstream's reference, the rule query, the sandbox and the transaction as kept;
   * or the wire's refusal of a request its schema alone cannot judge (an unknown biller, say).
   */
  take(call: WireCall<Settings, Body, any>): TakeSpec<T> | WireError | Promise<TakeSpec<T> | WireError>;
  /** The accepted answer: its body, or undefined for an empty one (MTN's 202). */
  answer(tx: T, call: WireCall<Settings, Body, any>): unknown;
}

/** What a take operation hands the engine: the engine's TakeCall, its duplicate answer as a wire error. */
export type TakeSpec<T> = Omit<TakeCall<T>, 'duplicate'> & { duplicate(existing: T | undefined): WireError };

/** A read of one kept transaction, by the upstream's reference or by another id it is indexed by. */
export interface ReadOperation<Settings, T> extends OperationBase<Settings> {
  method: 'get';
  path: string;
  book: string;
  /** The path parameter that names it, and whether it is the reference (`get`) or a lookup key (`find`). */
  param: string;
  by: 'reference' | 'lookup';
  missing(id: string): WireError;
  answer(tx: T, call: WireCall<Settings, unknown, any>): unknown;
}

/** Anything else (a sandbox action, a name enquiry): the handler answers, with the engine's books and answer. */
export interface CustomOperation<Settings, Body> extends OperationBase<Settings> {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  reference?: HeaderReference;
  /** Parsed as for a take, when given. */
  body?: z.ZodType<Body>;
  handle(call: WireCall<Settings, Body, any>): void | Promise<void>;
}

export type WireOperation<Settings> =
  | ({ kind: 'take' } & TakeOperation<Settings, any, any>)
  | ({ kind: 'read' } & ReadOperation<Settings, any>)
  | ({ kind: 'custom' } & CustomOperation<Settings, any>);

export interface WireDefinition<Settings> {
  provider: string;
  errors: WireErrors;
  /** The refusals of scenario behaviours (reject, server_error) in the upstream's words. */
  refusals: WireRefusals;
  /** Null when the call presents the right credentials; else the error to answer. Omitted: each operation checks its own. */
  auth?: WireAuth<Settings>;
  /** Signs each callback, where the upstream signs them. */
  sign?(settings: Settings, ctx: MockContext): CallbackSigner;
  /** The books, how their transactions settle, and the other ids each is found by. */
  /** A book's wire may be built per mock instance, when its callbacks read the clock or the settings. */
  books: Record<string, { wire: TransactionWire<any> | ((ctx: MockContext, settings: Settings) => TransactionWire<any>); lookupKeys?: (tx: any) => string[] }>;
  operations: readonly WireOperation<Settings>[];
  /** Largest body the upstream takes. */
  bodyLimit?: string;
  /**
   * 'json': the body is read as express.json reads it, only under a JSON content type, and the
   * operation's schema is given whatever it parsed (undefined, an array, an object); an unreadable
   * body is reported with the parser's error type. Default: any body is read as text and must be
   * a JSON object.
   */
  bodyParser?: 'text' | 'json';
  /** What one mock instance keeps besides its books (a counter, a plain book of records without callbacks). */
  instance?(ctx: MockContext, settings: Settings): unknown;
}

/** The wire's operations, typed one by one. */
export const take = <Settings, Body, T>(op: TakeOperation<Settings, Body, T>): WireOperation<Settings> => ({ kind: 'take', ...op });
export const read = <Settings, T>(op: ReadOperation<Settings, T>): WireOperation<Settings> => ({ kind: 'read', ...op });
export const custom = <Settings, Body = unknown>(op: CustomOperation<Settings, Body>): WireOperation<Settings> => ({ kind: 'custom', ...op });

/** A declared wire: the mock's factory, (ctx, settings) => the express router the engine builds. */
export function defineWire<Settings>(definition: WireDefinition<Settings>): (ctx: MockContext, settings: Settings) => Router {
  return (ctx, settings) => {
    const { errors } = definition;
    const engine = new MockEngine(ctx, {
      provider: definition.provider,
      refusals: definition.refusals,
      ...(definition.sign ? { signCallback: definition.sign(settings, ctx) } : {}),
    });
    const books = Object.fromEntries(
      Object.entries(definition.books).map(([name, b]) => [name, engine.book(name, typeof b.wire === 'function' ? b.wire(ctx, settings) : b.wire, b.lookupKeys ? { lookupKeys: b.lookupKeys } : {})]),
    );
    const instance = definition.instance?.(ctx, settings);
    const router = express.Router();
    // RAILYARD_WIRE_RESPONSE_LOG: every answer written down, to check against the provider's description.
    const log = wireResponseLog(definition.provider, errors.notFound !== undefined);
    if (log) router.use(log);
    const json = definition.bodyParser === 'json';
    const limit = definition.bodyLimit ?? (json ? '100kb' : '64kb');
    router.use(json ? express.json({ limit }) : express.text({ type: () => true, limit }));
    const fail = (res: Response, error: WireError): void => {
      if (error.headers) res.set(error.headers);
      errors.send(res, error);
    };
    /** The outage gate and the wire's auth, then the operation's own: false when it has answered. */
    const admit = async (req: Request, res: Response, own: { gate: boolean; auth?: WireAuth<Settings> }): Promise<boolean> => {
      if (own.gate) {
        if (ctx.health.isDown(definition.provider)) return (void fail(res, errors.outage), false);
        const refused = await definition.auth?.(req, settings, ctx, instance);
        if (refused) return (void fail(res, refused), false);
      }
      const refused = await own.auth?.(req, settings, ctx, instance);
      if (refused) return (void fail(res, refused), false);
      return true;
    };
    // With a route-not-found answer the gate stands before the routes, for every path; without
    // one, each operation runs it and any other path leaves the mock.
    const gateEachOperation = !errors.notFound;
    if (!gateEachOperation) router.use(async (req, res, next) => ((await admit(req, res, { gate: true })) ? next() : undefined));

    /** The body as the operation's schema reads it; undefined when the wire's error has been answered. */
    const parse = <Body>(schema: z.ZodType<Body> | undefined, req: Request, res: Response): { body: Body } | undefined => {
      if (!schema) return { body: undefined as Body };
      const object = json ? (typeof req.body === 'object' && req.body !== null ? (req.body as Record<string, unknown>) : {}) : parseJsonObject(req.body);
      if (!object) return void fail(res, errors.invalid({ kind: 'not_an_object' }));
      const parsed = schema.safeParse(json ? req.body : object);
      if (parsed.success) return { body: parsed.data };
      const [first] = parsed.error.issues;
      fail(res, errors.invalid({ kind: 'schema', message: first?.message ?? 'invalid', path: first?.path ?? [], input: object }));
      return undefined;
    };
    const call = <Body>(req: Request, res: Response, body: Body, reference = ''): WireCall<Settings, Body> => ({
      req,
      res,
      params: req.params as Record<string, string>,
      body,
      settings,
      ctx,
      instance,
      books,
      answer: (book, reference, outcome) => engine.answer(book, reference, outcome),
      lookup: (exchange, query) => engine.lookup(exchange, query),
      fail: (error) => fail(res, error),
      reference,
    });

    for (const op of definition.operations) {
      router[op.method](op.path, async (req: Request, res: Response) => {
        res.locals[WIRE_ROUTE_LOCAL] = op.path;
        if (!(await admit(req, res, { gate: gateEachOperation, ...(op.auth ? { auth: op.auth } : {}) }))) return;
        if (op.kind === 'read') {
          const id = (req.params as Record<string, string>)[op.param]!;
          const book = books[op.book]!;
          const tx = op.by === 'reference' ? await book.get(id) : await book.find(id);
          if (!tx) return fail(res, op.missing(id));
          return void res.status(200).json(op.answer(tx, call(req, res, undefined)));
        }
        const reference = op.reference ? (req.get(op.reference.header) ?? '') : '';
        if (op.reference && !op.reference.valid(reference)) return fail(res, op.reference.invalid);
        const parsed = parse(op.body, req, res);
        if (!parsed) return;
        const wireCall = call(req, res, parsed.body, reference);
        if (op.kind === 'custom') return void (await op.handle(wireCall));
        const spec = await op.take(wireCall);
        if (!('book' in spec)) return fail(res, spec);
        const tx = await engine.take({ req, res, successStatus: op.successStatus }, { ...spec, duplicate: async () => fail(res, spec.duplicate(await books[spec.book]!.get(spec.reference))) });
        if (!tx) return;
        const answer = op.answer(tx, wireCall);
        if (answer === undefined) res.status(op.successStatus).end();
        else res.status(op.successStatus).json(answer);
      });
    }

    if (errors.notFound) router.use((_req, res) => fail(res, errors.notFound!));
    router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
      const { status, type } = err as { status?: number; type?: string };
      if (typeof status === 'number' && status >= 400 && status < 500) {
        return fail(res, errors.invalid({ kind: 'unreadable', status, ...(typeof type === 'string' ? { type } : {}) }));
      }
      ctx.logger.error(`${definition.provider} mock failed`, { error: String(err) });
      if (!res.headersSent) fail(res, errors.internal);
    });
    return router;
  };
}

/** The query a take asks the rules with (re-exported for wire modules). */
export type { MockQuery };
