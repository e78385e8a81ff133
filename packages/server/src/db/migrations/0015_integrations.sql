CREATE TABLE "integration_oauth_flows" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"integration_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"envelope" jsonb NOT NULL,
	"return_to" text,
	"expires_at" timestamp with time zone NOT NULL,
	"consumed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL
);
--> statement-breakpoint
CREATE TABLE "integration_subscriptions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"integration_id" uuid NOT NULL,
	"agent_id" uuid NOT NULL,
	"conversation" jsonb NOT NULL,
	"conversation_key" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "integration_subscriptions_attachment" UNIQUE("integration_id","conversation_key","agent_id")
);
--> statement-breakpoint
CREATE TABLE "integrations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"state" text DEFAULT 'disconnected' NOT NULL,
	"setup_revision" integer DEFAULT 1 NOT NULL,
	"last_oauth_flow_id" uuid,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"provider_tenant_id" text,
	"provider_account_ref" text,
	"provider_agent_display_name" text DEFAULT '' NOT NULL,
	"bot_mention" text,
	"credential_secret_id" uuid,
	"provider_config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"provider_identity" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"runtime_failure_message" text,
	"runtime_failure_retry_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "integrations_org_id_id" UNIQUE("org_id","id"),
	CONSTRAINT "integrations_project_name" UNIQUE("project_id","name"),
	CONSTRAINT "integrations_state" CHECK ("integrations"."state" IN ('active', 'disconnected')),
	CONSTRAINT "integrations_setup_revision" CHECK ("integrations"."setup_revision" >= 1),
	CONSTRAINT "integrations_runtime_failure" CHECK (("integrations"."runtime_failure_message" IS NULL) = ("integrations"."runtime_failure_retry_at" IS NULL))
);
--> statement-breakpoint
ALTER TABLE "integration_oauth_flows" ADD CONSTRAINT "integration_oauth_flows_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integration_oauth_flows" ADD CONSTRAINT "integration_oauth_flows_org_id_integration_id_integrations_org_id_id_fk" FOREIGN KEY ("org_id","integration_id") REFERENCES "public"."integrations"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integration_subscriptions" ADD CONSTRAINT "integration_subscriptions_org_id_integration_id_integrations_org_id_id_fk" FOREIGN KEY ("org_id","integration_id") REFERENCES "public"."integrations"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integration_subscriptions" ADD CONSTRAINT "integration_subscriptions_org_id_agent_id_agents_org_id_id_fk" FOREIGN KEY ("org_id","agent_id") REFERENCES "public"."agents"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integrations" ADD CONSTRAINT "integrations_org_id_project_id_projects_org_id_id_fk" FOREIGN KEY ("org_id","project_id") REFERENCES "public"."projects"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integrations" ADD CONSTRAINT "integrations_credential_secret_fk" FOREIGN KEY ("org_id","credential_secret_id") REFERENCES "public"."secrets"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "integration_oauth_flows_integration_idx" ON "integration_oauth_flows" USING btree ("integration_id");--> statement-breakpoint
CREATE INDEX "integration_subscriptions_list_idx" ON "integration_subscriptions" USING btree ("integration_id","created_at","id");--> statement-breakpoint
CREATE INDEX "integration_subscriptions_agent_idx" ON "integration_subscriptions" USING btree ("agent_id");--> statement-breakpoint
CREATE INDEX "integrations_org_created_idx" ON "integrations" USING btree ("org_id","created_at","id");--> statement-breakpoint
CREATE INDEX "integrations_credential_idx" ON "integrations" USING btree ("org_id","credential_secret_id");