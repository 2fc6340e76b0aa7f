import type { ConnectUrlNotice } from '../../workflows/sdk/index.js';

/**
 * Hands the connect link to the human. Here: a JSON POST to a webhook (a chat channel, an email
 * service); NOTIFY_WEBHOOK_URL says where.
 */
export async function sendConnectLink(notice: ConnectUrlNotice): Promise<void> {
  const target = process.env.NOTIFY_WEBHOOK_URL;
  if (!target) throw new Error('NOTIFY_WEBHOOK_URL is not set');
  const res = await fetch(target, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: `Please connect ${notice.integration}: ${notice.url}`, ...notice }),
  });
  if (!res.ok) throw new Error(`the webhook answered HTTP ${res.status}`);
}
