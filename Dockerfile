# syntax=docker/dockerfile:1
# endpoint-binder: one image for every subcommand (controller, forwarder, uninstall, mock-api, ...).
#   docker build -t endpoint-binder:dev .
#   docker run --rm endpoint-binder:dev --help
# Runs as the numeric non-root user 65532 and needs no writable path but an optional /tmp, so it
# works with readOnlyRootFilesystem (the Helm chart's default).

ARG NODE_IMAGE=node:22-alpine

# Build: compile TypeScript to dist/, then drop the dev dependencies.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Runtime: Node 22 and the compiled CLI, nothing else (npm and yarn removed).
FROM ${NODE_IMAGE} AS runtime
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack /opt/yarn-* \
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
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
CMD ["--help"]
