# railyard: the sandbox as a container. No build step: tsx (a runtime dependency) runs the
# TypeScript sources on the image's own Node 24. The `node@24` devDependency is omitted.
#
#   docker build -t railyard .
#   docker run --rm -p 4010:4010 -v railyard-data:/data railyard
ARG NODE_IMAGE=node:24-slim
FROM ${NODE_IMAGE}

ENV NODE_ENV=production \
    PORT=4010 \
    HOST=0.0.0.0 \
    RAILYARD_DB=/data/railyard.db

WORKDIR /app

# Dependencies first so the layer is cached until the lockfile changes. Installed as root and
# left root-owned: the app user can read them but not rewrite them.
COPY package.json package-lock.json ./
# @scarf/scarf (a pact-js dependency) phones home from its install script; npm < 11 would run it.
RUN SCARF_ANALYTICS=false npm ci --omit=dev --no-audit --no-fund \
    && npm cache clean --force

COPY tsconfig.json ./
COPY bin/ ./bin/
COPY scenarios/ ./scenarios/
COPY src/ ./src/

# The SQLite store lives on a volume the unprivileged user owns.
RUN mkdir -p /data && chown node:node /data
VOLUME /data

USER node

EXPOSE 4010

# slim has no curl: probe with Node's built-in fetch.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||4010)+'/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"]

# Exec form: node is PID 1 and receives SIGTERM, which the server handles by draining requests.
CMD ["node", "--import", "tsx", "src/main.ts", "serve"]
