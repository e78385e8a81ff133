import nodemailer from "nodemailer";
import type { Mailer } from "./mail.js";

/**
 * Sends mail through the SMTP server named by SVC_SMTP_URL (`smtp://user:pass@host:587`, or `smtps://`
 * for implicit TLS; nodemailer upgrades with STARTTLS when the server offers it). Address fields are
 * given as structured objects so nodemailer encodes them; no header text is built by hand.
 */
export function createSmtpMailer(options: { url: string; from: string }): Mailer {
  const transport = nodemailer.createTransport(options.url);
  return {
    async sendVerification({ to, displayName, link }) {
      await transport.sendMail({
        from: options.from,
        to: { name: displayName, address: to },
        subject: "Verify your email address",
        text: `Hello ${displayName},\n\nOpen this link to verify your email address for svc:\n\n${link}\n\nThe link works once and expires in 24 hours. If you did not sign up, ignore this message.\n`,
      });
    },
    close() {
      transport.close();
    },
  };
}
