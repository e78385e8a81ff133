CREATE TABLE "machine_daemon_tokens" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"machine_id" uuid NOT NULL,
	"name" text NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"token_hash" text NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"revoke_reason" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "machine_daemon_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "machine_pools" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"name" text NOT NULL,
	"management_kind" text DEFAULT 'tenant' NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"provider" text NOT NULL,
	"default_machine_cpu" integer,
	"default_machine_memory_mb" integer,
	"default_machine_env" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"default_machine_secret_env" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"default_machine_provider_options" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"default_cwd" text DEFAULT '' NOT NULL,
	"provider_config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"provider_auth_secret_id" uuid,
	"runtime_protection_enabled" boolean DEFAULT false NOT NULL,
	"max_total_machines" integer NOT NULL,
	"max_total_cpu" integer,
	"max_total_memory_mb" integer,
	"min_machine_cpu" integer,
	"min_machine_memory_mb" integer,
	"max_machine_cpu" integer,
	"max_machine_memory_mb" integer,
	"delete_after_idle_minutes" integer,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "machine_pools_org_id_id" UNIQUE("org_id","id"),
	CONSTRAINT "machine_pools_org_name" UNIQUE("org_id","name"),
	CONSTRAINT "machine_pools_management_kind" CHECK ("machine_pools"."management_kind" IN ('tenant', 'cluster')),
	CONSTRAINT "machine_pools_max_total_machines" CHECK ("machine_pools"."max_total_machines" >= 0),
	CONSTRAINT "machine_pools_idle" CHECK ("machine_pools"."delete_after_idle_minutes" IS NULL OR "machine_pools"."delete_after_idle_minutes" >= 5)
);
--> statement-breakpoint
CREATE TABLE "machines" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"machine_pool_id" uuid,
	"source_kind" text NOT NULL,
	"display_name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"provider" text NOT NULL,
	"lifecycle_state" text NOT NULL,
	"lifecycle_reason_code" text DEFAULT '' NOT NULL,
	"lifecycle_reason_message" text DEFAULT '' NOT NULL,
	"cwd" text DEFAULT '' NOT NULL,
	"env" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"secret_env" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"cpu" integer,
	"memory_mb" integer,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"idempotency_key" text,
	"lease_expires_at" timestamp with time zone,
	"lease_token_id" uuid,
	"asleep_since" timestamp with time zone,
	"last_observed_at" timestamp with time zone,
	"next_reconcile_after" timestamp with time zone,
	"provision_attempts" integer DEFAULT 0 NOT NULL,
	"delete_attempts" integer DEFAULT 0 NOT NULL,
	"failure_report" jsonb,
	"deleted_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "machines_org_id_id" UNIQUE("org_id","id"),
	CONSTRAINT "machines_org_idempotency_key" UNIQUE("org_id","idempotency_key"),
	CONSTRAINT "machines_source_kind" CHECK ("machines"."source_kind" IN ('byo', 'pool')),
	CONSTRAINT "machines_pool_shape" CHECK (("machines"."source_kind" = 'pool') = ("machines"."machine_pool_id" IS NOT NULL)),
	CONSTRAINT "machines_lifecycle_state" CHECK ("machines"."lifecycle_state" IN ('provisioning', 'provision_failed', 'active', 'deleting', 'delete_failed', 'deleted')),
	CONSTRAINT "machines_deleted_shape" CHECK (("machines"."lifecycle_state" = 'deleted') = ("machines"."deleted_at" IS NOT NULL))
);
--> statement-breakpoint
CREATE TABLE "project_machine_grants" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"machine_id" uuid NOT NULL,
	"source_kind" text NOT NULL,
	"project_machine_pool_grant_id" uuid,
	"description" text DEFAULT '' NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"idempotency_key" text,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "project_machine_grants_project_machine" UNIQUE("project_id","machine_id"),
	CONSTRAINT "project_machine_grants_project_idempotency_key" UNIQUE("project_id","idempotency_key"),
	CONSTRAINT "project_machine_grants_source_kind" CHECK ("project_machine_grants"."source_kind" IN ('explicit', 'pool')),
	CONSTRAINT "project_machine_grants_pool_shape" CHECK (("project_machine_grants"."source_kind" = 'pool') = ("project_machine_grants"."project_machine_pool_grant_id" IS NOT NULL))
);
--> statement-breakpoint
CREATE TABLE "project_machine_pool_grants" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"machine_pool_id" uuid NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"default_machine_cpu" integer,
	"default_machine_memory_mb" integer,
	"default_machine_env_overlay" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"default_machine_secret_env_overlay" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"default_machine_provider_options_overlay" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"default_cwd" text DEFAULT '' NOT NULL,
	"max_total_machines" integer,
	"max_total_cpu" integer,
	"max_total_memory_mb" integer,
	"min_machine_cpu" integer,
	"min_machine_memory_mb" integer,
	"max_machine_cpu" integer,
	"max_machine_memory_mb" integer,
	"delete_after_idle_minutes" integer,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "project_machine_pool_grants_project_pool" UNIQUE("project_id","machine_pool_id"),
	CONSTRAINT "project_machine_pool_grants_idle" CHECK ("project_machine_pool_grants"."delete_after_idle_minutes" IS NULL OR "project_machine_pool_grants"."delete_after_idle_minutes" = 0 OR "project_machine_pool_grants"."delete_after_idle_minutes" >= 5)
);
--> statement-breakpoint
ALTER TABLE "machine_daemon_tokens" ADD CONSTRAINT "machine_daemon_tokens_org_id_machine_id_machines_org_id_id_fk" FOREIGN KEY ("org_id","machine_id") REFERENCES "public"."machines"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machine_pools" ADD CONSTRAINT "machine_pools_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machine_pools" ADD CONSTRAINT "machine_pools_auth_secret_fk" FOREIGN KEY ("org_id","provider_auth_secret_id") REFERENCES "public"."secrets"("org_id","id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machines" ADD CONSTRAINT "machines_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machines" ADD CONSTRAINT "machines_org_id_machine_pool_id_machine_pools_org_id_id_fk" FOREIGN KEY ("org_id","machine_pool_id") REFERENCES "public"."machine_pools"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_machine_grants" ADD CONSTRAINT "project_machine_grants_project_machine_pool_grant_id_project_machine_pool_grants_id_fk" FOREIGN KEY ("project_machine_pool_grant_id") REFERENCES "public"."project_machine_pool_grants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_machine_grants" ADD CONSTRAINT "project_machine_grants_org_id_project_id_projects_org_id_id_fk" FOREIGN KEY ("org_id","project_id") REFERENCES "public"."projects"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_machine_grants" ADD CONSTRAINT "project_machine_grants_org_id_machine_id_machines_org_id_id_fk" FOREIGN KEY ("org_id","machine_id") REFERENCES "public"."machines"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_machine_pool_grants" ADD CONSTRAINT "project_machine_pool_grants_org_id_project_id_projects_org_id_id_fk" FOREIGN KEY ("org_id","project_id") REFERENCES "public"."projects"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_machine_pool_grants" ADD CONSTRAINT "project_machine_pool_grants_org_id_machine_pool_id_machine_pools_org_id_id_fk" FOREIGN KEY ("org_id","machine_pool_id") REFERENCES "public"."machine_pools"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "machine_daemon_tokens_machine_created_idx" ON "machine_daemon_tokens" USING btree ("machine_id","created_at","id");--> statement-breakpoint
CREATE INDEX "machine_pools_org_created_idx" ON "machine_pools" USING btree ("org_id","created_at","id");--> statement-breakpoint
CREATE INDEX "machine_pools_auth_secret_idx" ON "machine_pools" USING btree ("org_id","provider_auth_secret_id");--> statement-breakpoint
CREATE UNIQUE INDEX "machines_live_byo_name" ON "machines" USING btree ("org_id","display_name") WHERE "machines"."source_kind" = 'byo' AND "machines"."deleted_at" IS NULL;--> statement-breakpoint
CREATE INDEX "machines_org_created_idx" ON "machines" USING btree ("org_id","created_at","id");--> statement-breakpoint
CREATE INDEX "machines_pool_idx" ON "machines" USING btree ("machine_pool_id");--> statement-breakpoint
CREATE INDEX "project_machine_grants_project_created_idx" ON "project_machine_grants" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "project_machine_grants_machine_idx" ON "project_machine_grants" USING btree ("machine_id");--> statement-breakpoint
CREATE INDEX "project_machine_pool_grants_project_created_idx" ON "project_machine_pool_grants" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "project_machine_pool_grants_pool_idx" ON "project_machine_pool_grants" USING btree ("machine_pool_id");