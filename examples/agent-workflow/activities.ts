import type { ApprovalUrlNotice, ConnectUrlNotice } from '../../workflows/sdk/index.js';

/**
 * Hands the connect link (or, for a call that needs a person's approval, the approval page) to the human. Here: a JSON POST to a webhook (a chat channel, an email
 * service); NOTIFY_WEBHOOK_URL says where.
 */
export async function sendConnectLink(notice: ConnectUrlNotice | ApprovalUrlNotice): Promise<void> {
  const target = process.env.NOTIFY_WEBHOOK_URL;
  if (!target) throw new Error('NOTIFY_WEBHOOK_URL is not set');
  const res = await fetch(target, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      text:
        notice.reason === 'approval_required'
          ? `Please approve or deny ${notice.tool}: ${notice.url}`
          : `Please connect ${notice.integration}: ${notice.url}`,
      ...notice,
    }),
  });
  if (!res.ok) throw new Error(`the webhook answered HTTP ${res.status}`);
}
