ALTER TABLE "processes" ADD COLUMN "kind" text DEFAULT 'command' NOT NULL;--> statement-breakpoint
ALTER TABLE "processes" ADD COLUMN "transfer" jsonb;--> statement-breakpoint
ALTER TABLE "processes" ADD CONSTRAINT "processes_kind" CHECK ("processes"."kind" IN ('command', 'upload', 'download'));--> statement-breakpoint
ALTER TABLE "processes" ADD CONSTRAINT "processes_transfer" CHECK (("processes"."kind" = 'command') = ("processes"."transfer" IS NULL));