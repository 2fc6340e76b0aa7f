FROM node:20-bookworm-slim
# chromium: the browser the server runs for cookie integrations' live sign-in (cookie capture).
RUN apt-get update && apt-get install -y --no-install-recommends chromium && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund
COPY . .
EXPOSE 3000
CMD ["npm", "run", "server"]
