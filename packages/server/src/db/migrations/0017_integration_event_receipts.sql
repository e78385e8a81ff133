CREATE TABLE "integration_event_receipts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"integration_id" uuid NOT NULL,
	"provider_event_id" text NOT NULL,
	"event_kind" text NOT NULL,
	"payload" jsonb NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"retry_at" timestamp with time zone,
	"failure" text,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"processed_at" timestamp with time zone,
	CONSTRAINT "integration_event_receipts_event" UNIQUE("integration_id","provider_event_id")
);
--> statement-breakpoint
ALTER TABLE "integration_event_receipts" ADD CONSTRAINT "integration_event_receipts_integration_id_integrations_id_fk" FOREIGN KEY ("integration_id") REFERENCES "public"."integrations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "integration_event_receipts_due_idx" ON "integration_event_receipts" USING btree ("state","retry_at");