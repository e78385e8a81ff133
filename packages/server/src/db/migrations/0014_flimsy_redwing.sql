CREATE TABLE "mcp_oauth_flows" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"started_by_user_id" uuid,
	"owner_kind" text NOT NULL,
	"owner_project_id" uuid,
	"owner_user_id" uuid,
	"name" text NOT NULL,
	"metadata" jsonb NOT NULL,
	"mcp_url" text NOT NULL,
	"resource" text NOT NULL,
	"authorization_server" text NOT NULL,
	"token_endpoint" text NOT NULL,
	"client_id" text NOT NULL,
	"scopes" text,
	"redirect_uri" text NOT NULL,
	"return_to" text,
	"sealed" jsonb NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"consumed_at" timestamp with time zone,
	"secret_id" uuid,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "mcp_oauth_flows_owner_shape" CHECK (("mcp_oauth_flows"."owner_kind" = 'org' AND "mcp_oauth_flows"."owner_project_id" IS NULL AND "mcp_oauth_flows"."owner_user_id" IS NULL)
        OR ("mcp_oauth_flows"."owner_kind" = 'project' AND "mcp_oauth_flows"."owner_project_id" IS NOT NULL AND "mcp_oauth_flows"."owner_user_id" IS NULL)
        OR ("mcp_oauth_flows"."owner_kind" = 'user' AND "mcp_oauth_flows"."owner_project_id" IS NULL AND "mcp_oauth_flows"."owner_user_id" IS NOT NULL))
);
--> statement-breakpoint
ALTER TABLE "mcp_oauth_flows" ADD CONSTRAINT "mcp_oauth_flows_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mcp_oauth_flows" ADD CONSTRAINT "mcp_oauth_flows_started_by_user_id_users_id_fk" FOREIGN KEY ("started_by_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mcp_oauth_flows" ADD CONSTRAINT "mcp_oauth_flows_owner_user_id_users_id_fk" FOREIGN KEY ("owner_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mcp_oauth_flows" ADD CONSTRAINT "mcp_oauth_flows_org_id_owner_project_id_projects_org_id_id_fk" FOREIGN KEY ("org_id","owner_project_id") REFERENCES "public"."projects"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "mcp_oauth_flows_expires_idx" ON "mcp_oauth_flows" USING btree ("expires_at");