import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from "react";
import { api, call, isSignedOut, type Schemas } from "./api/client";

export type Me = Schemas["CurrentUser"];

interface Session {
  /** undefined while loading, null when signed out. */
  me: Me | null | undefined;
  /** The person signed out here (rather than a session that ended): sign-in then takes them nowhere back. */
  signedOut: boolean;
  refresh: () => Promise<Me | null>;
  signOut: () => Promise<void>;
}

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [signedOut, setSignedOut] = useState(false);
  const refresh = useCallback(async () => {
    try {
      const current = await call(api.GET("/api/v1/me"));
      setSignedOut(false);
      setMe(current);
      return current;
    } catch (err) {
      if (!isSignedOut(err)) throw err;
      setMe(null);
      return null;
    }
  }, []);
  const signOut = useCallback(async () => {
    await call(api.POST("/api/auth/logout"));
    setSignedOut(true);
    setMe(null);
  }, []);
  useEffect(() => {
    void refresh().catch(() => setMe(null));
  }, [refresh]);
  return <SessionContext.Provider value={{ me, signedOut, refresh, signOut }}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside SessionProvider");
  return session;
}
