CREATE TABLE "configured_model_revisions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"configured_model_id" uuid NOT NULL,
	"provider_model_slug" text NOT NULL,
	"context_window_tokens" integer NOT NULL,
	"max_output_tokens" integer NOT NULL,
	"default_max_output_tokens" integer,
	"default_cache_retention" text NOT NULL,
	"supports_tools" boolean NOT NULL,
	"supports_reasoning" boolean NOT NULL,
	"default_reasoning_effort" text DEFAULT '' NOT NULL,
	"supported_reasoning_efforts" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"input_modalities" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"output_modalities" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"api_variant_options" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "configured_model_revisions_model_id" UNIQUE("org_id","configured_model_id","id"),
	CONSTRAINT "configured_model_revisions_window" CHECK ("configured_model_revisions"."max_output_tokens" >= 1 AND "configured_model_revisions"."context_window_tokens" > "configured_model_revisions"."max_output_tokens"),
	CONSTRAINT "configured_model_revisions_default_output" CHECK ("configured_model_revisions"."default_max_output_tokens" IS NULL OR ("configured_model_revisions"."default_max_output_tokens" >= 1 AND "configured_model_revisions"."default_max_output_tokens" <= "configured_model_revisions"."max_output_tokens")),
	CONSTRAINT "configured_model_revisions_cache_retention" CHECK ("configured_model_revisions"."default_cache_retention" IN ('none', 'short', 'long'))
);
--> statement-breakpoint
CREATE TABLE "configured_models" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"model_provider_config_id" uuid NOT NULL,
	"management_kind" text DEFAULT 'tenant' NOT NULL,
	"name" text NOT NULL,
	"current_revision_id" uuid,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "configured_models_org_id_id" UNIQUE("org_id","id"),
	CONSTRAINT "configured_models_provider_name" UNIQUE("model_provider_config_id","name"),
	CONSTRAINT "configured_models_management_kind" CHECK ("configured_models"."management_kind" IN ('tenant', 'cluster'))
);
--> statement-breakpoint
CREATE TABLE "model_provider_configs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"management_kind" text DEFAULT 'tenant' NOT NULL,
	"name" text NOT NULL,
	"api_format" text NOT NULL,
	"api_variant" text DEFAULT 'default' NOT NULL,
	"base_url" text NOT NULL,
	"endpoint_path" text NOT NULL,
	"request_timeout_ms" integer DEFAULT 600000 NOT NULL,
	"auth_kind" text NOT NULL,
	"auth_header_name" text,
	"credential_secret_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "model_provider_configs_org_id_id" UNIQUE("org_id","id"),
	CONSTRAINT "model_provider_configs_org_name" UNIQUE("org_id","name"),
	CONSTRAINT "model_provider_configs_management_kind" CHECK ("model_provider_configs"."management_kind" IN ('tenant', 'cluster')),
	CONSTRAINT "model_provider_configs_api_format" CHECK ("model_provider_configs"."api_format" IN ('openai-responses', 'openai-chat-completions', 'anthropic-messages')),
	CONSTRAINT "model_provider_configs_api_variant" CHECK ("model_provider_configs"."api_variant" IN ('default', 'openrouter', 'bedrock')),
	CONSTRAINT "model_provider_configs_base_url" CHECK ("model_provider_configs"."base_url" ~ '^https?://' AND "model_provider_configs"."base_url" NOT LIKE '%/'),
	CONSTRAINT "model_provider_configs_endpoint_path" CHECK ("model_provider_configs"."endpoint_path" LIKE '/%'),
	CONSTRAINT "model_provider_configs_timeout" CHECK ("model_provider_configs"."request_timeout_ms" > 0),
	CONSTRAINT "model_provider_configs_auth" CHECK (("model_provider_configs"."auth_kind" = 'bearer_token' AND "model_provider_configs"."auth_header_name" IS NULL)
        OR ("model_provider_configs"."auth_kind" = 'api_key_header' AND "model_provider_configs"."auth_header_name" IS NOT NULL))
);
--> statement-breakpoint
CREATE TABLE "project_model_grants" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"configured_model_id" uuid NOT NULL,
	"context_window_tokens" integer,
	"max_output_tokens" integer,
	"default_max_output_tokens" integer,
	"default_cache_retention" text,
	"supports_tools" boolean,
	"supports_reasoning" boolean,
	"default_reasoning_effort" text,
	"supported_reasoning_efforts" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"input_modalities" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"output_modalities" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "project_model_grants_org_id_id" UNIQUE("org_id","id"),
	CONSTRAINT "project_model_grants_project_model" UNIQUE("project_id","configured_model_id"),
	CONSTRAINT "project_model_grants_cache_retention" CHECK ("project_model_grants"."default_cache_retention" IS NULL OR "project_model_grants"."default_cache_retention" IN ('none', 'short', 'long'))
);
--> statement-breakpoint
ALTER TABLE "configured_model_revisions" ADD CONSTRAINT "configured_model_revisions_model_fk" FOREIGN KEY ("org_id","configured_model_id") REFERENCES "public"."configured_models"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "configured_models" ADD CONSTRAINT "configured_models_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "configured_models" ADD CONSTRAINT "configured_models_provider_fk" FOREIGN KEY ("org_id","model_provider_config_id") REFERENCES "public"."model_provider_configs"("org_id","id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "configured_models" ADD CONSTRAINT "configured_models_current_revision_fk" FOREIGN KEY ("org_id","id","current_revision_id") REFERENCES "public"."configured_model_revisions"("org_id","configured_model_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "model_provider_configs" ADD CONSTRAINT "model_provider_configs_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "model_provider_configs" ADD CONSTRAINT "model_provider_configs_credential_fk" FOREIGN KEY ("org_id","credential_secret_id") REFERENCES "public"."secrets"("org_id","id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_model_grants" ADD CONSTRAINT "project_model_grants_org_id_project_id_projects_org_id_id_fk" FOREIGN KEY ("org_id","project_id") REFERENCES "public"."projects"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_model_grants" ADD CONSTRAINT "project_model_grants_model_fk" FOREIGN KEY ("org_id","configured_model_id") REFERENCES "public"."configured_models"("org_id","id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "configured_models_provider_created_idx" ON "configured_models" USING btree ("model_provider_config_id","created_at","id");--> statement-breakpoint
CREATE INDEX "model_provider_configs_org_created_idx" ON "model_provider_configs" USING btree ("org_id","created_at","id");--> statement-breakpoint
CREATE INDEX "model_provider_configs_credential_idx" ON "model_provider_configs" USING btree ("org_id","credential_secret_id");--> statement-breakpoint
CREATE INDEX "project_model_grants_model_idx" ON "project_model_grants" USING btree ("configured_model_id");--> statement-breakpoint
CREATE INDEX "project_model_grants_project_created_idx" ON "project_model_grants" USING btree ("project_id","created_at","id");