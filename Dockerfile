FROM node:24-bookworm-slim
# chromium: the browser the server runs for cookie integrations' live sign-in (cookie capture) and
# the worker runs for the browser built-in.
RUN apt-get update && apt-get install -y --no-install-recommends chromium && rm -rf /var/lib/apt/lists/*
# Switchboard (and the chromium it starts) never runs as root: a dedicated user without a login
# shell. The code and dependencies stay root-owned, so the process cannot rewrite them.
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /home/switchboard --shell /usr/sbin/nologin switchboard
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund
COPY . .
USER switchboard:switchboard
EXPOSE 3000
CMD ["npm", "run", "server"]
