/** The path of an agent in the API. */
export interface Ids {
  orgID: string;
  projectID: string;
  agentID: string;
}
