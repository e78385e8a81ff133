CREATE TABLE "process_actions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"process_id" uuid NOT NULL,
	"tool_call_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"kind" text NOT NULL,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"state" text DEFAULT 'queued' NOT NULL,
	"runtime_id" uuid,
	"accepted_at" timestamp with time zone,
	"reason" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "process_actions_tool_call_id_unique" UNIQUE("tool_call_id"),
	CONSTRAINT "process_actions_process_seq" UNIQUE("process_id","seq"),
	CONSTRAINT "process_actions_kind" CHECK ("process_actions"."kind" IN ('write', 'read', 'interrupt', 'terminate')),
	CONSTRAINT "process_actions_state" CHECK ("process_actions"."state" IN ('queued', 'accepted', 'applied', 'failed', 'unknown'))
);
--> statement-breakpoint
ALTER TABLE "process_actions" ADD CONSTRAINT "process_actions_process_id_processes_id_fk" FOREIGN KEY ("process_id") REFERENCES "public"."processes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "process_actions" ADD CONSTRAINT "process_actions_tool_call_id_tool_calls_id_fk" FOREIGN KEY ("tool_call_id") REFERENCES "public"."tool_calls"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "process_actions_one_accepted" ON "process_actions" USING btree ("process_id") WHERE "process_actions"."state" = 'accepted';--> statement-breakpoint
CREATE INDEX "process_actions_open_idx" ON "process_actions" USING btree ("process_id","seq") WHERE "process_actions"."state" IN ('queued', 'accepted');