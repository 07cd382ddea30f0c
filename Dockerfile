# syntax=docker/dockerfile:1
# endpoint-binder: one image for every subcommand (controller, forwarder, uninstall, check, status, ...).
#   docker build -t endpoint-binder:dev .
#   docker run --rm endpoint-binder:dev --help
# Runs as the numeric non-root user 65532 under tini (PID 1 reaps children and forwards SIGTERM to
# node, whose subcommands each handle it), and needs no writable path but an optional /tmp, so it
# works with readOnlyRootFilesystem (the Helm chart's default). Multi-arch (amd64, arm64) builds,
# the SBOM and provenance come from .github/workflows/release.yml.

# The base is pinned by digest (the multi-arch index of node:22-alpine); .github/dependabot.yml
# proposes updates. Override with --build-arg NODE_IMAGE=... to build on another base.
ARG NODE_IMAGE=node:22-alpine@sha256:8094c002d08262dba12645a3b4a15cd6cd627d30bc782f53229a2ec13ee22a00

# Build: compile TypeScript to dist/, then drop the dev dependencies (tsx, esbuild, the test tools)
# and the development commands' code: the Kubernetes API simulator, the mock management API and the
# demo are for laptops and tests, not for a cluster (`endpoint-binder kubesim` in the image says so).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build \
  && rm -rf dist/kubesim dist/mock dist/demo dist/cli/kubesim-command.* dist/cli/mock-api-command.* \
      dist/cli/mock-ingress-flags.* dist/cli/demo-command.* \
  && npm prune --omit=dev --no-audit --no-fund --ignore-scripts

# Runtime: Node 22, tini and the compiled CLI, nothing else (npm and yarn removed).
FROM ${NODE_IMAGE} AS runtime
ARG VERSION=0.0.0-dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
LABEL org.opencontainers.image.title="endpoint-binder" \
      org.opencontainers.image.description="Kubernetes operator that projects cluster-bound endpoints into a cluster as Services" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/endpoint-binder/endpoint-binder" \
      org.opencontainers.image.documentation="https://github.com/endpoint-binder/endpoint-binder/blob/main/docs/install.md" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
RUN apk add --no-cache tini \
  && rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack /opt/yarn-* \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg \
  && printf '#!/bin/sh\nexec node /app/dist/cli/main.js "$@"\n' > /usr/local/bin/endpoint-binder \
  && chmod 0755 /usr/local/bin/endpoint-binder
WORKDIR /app
ENV NODE_ENV=production HOME=/tmp
# package.json carries "type": "module", which the compiled ESM files need.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER 65532:65532
# controller http (probes, /metrics, /status), forwarder http; the forwarder also listens on its port range.
EXPOSE 8080 8081
ENTRYPOINT ["/sbin/tini", "--", "node", "/app/dist/cli/main.js"]
CMD ["--help"]
