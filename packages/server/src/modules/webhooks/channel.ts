/** The NOTIFY channel that wakes the webhook sender when deliveries are written (a hint; polling finds them anyway). */
export const WEBHOOK_CHANNEL = "svc_webhook_deliveries";
