CREATE TABLE "integration_assignments" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"integration_id" uuid NOT NULL,
	"agent_id" uuid NOT NULL,
	"conversation" jsonb NOT NULL,
	"conversation_key" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "integration_assignments_agent" UNIQUE("agent_id","integration_id")
);
--> statement-breakpoint
CREATE TABLE "integration_launch_choices" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"integration_id" uuid NOT NULL,
	"source_event_id" text NOT NULL,
	"conversation" jsonb NOT NULL,
	"profile_ids" jsonb NOT NULL,
	"person_tenant_id" text NOT NULL,
	"person_user_id" text NOT NULL,
	"text" text NOT NULL,
	"posted_ts" text,
	"chosen_profile_id" uuid,
	"chosen_event" text,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "integration_launch_choices_event" UNIQUE("integration_id","source_event_id")
);
--> statement-breakpoint
ALTER TABLE "integration_assignments" ADD CONSTRAINT "integration_assignments_org_id_integration_id_integrations_org_id_id_fk" FOREIGN KEY ("org_id","integration_id") REFERENCES "public"."integrations"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integration_assignments" ADD CONSTRAINT "integration_assignments_org_id_agent_id_agents_org_id_id_fk" FOREIGN KEY ("org_id","agent_id") REFERENCES "public"."agents"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integration_launch_choices" ADD CONSTRAINT "integration_launch_choices_org_id_integration_id_integrations_org_id_id_fk" FOREIGN KEY ("org_id","integration_id") REFERENCES "public"."integrations"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "integration_assignments_conversation_idx" ON "integration_assignments" USING btree ("integration_id","conversation_key");