/** Outbound mail. svc only needs it to verify addresses; without SVC_SMTP_URL no mail is sent. */
export interface Mailer {
  sendVerification(message: { to: string; displayName: string; link: string }): Promise<void>;
  close(): void;
}
