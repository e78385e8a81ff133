import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from "react";
import { api, call, isSignedOut, type Schemas } from "./api/client";

export type Me = Schemas["CurrentUser"];

interface Session {
  /** undefined while loading, null when signed out. */
  me: Me | null | undefined;
  refresh: () => Promise<Me | null>;
  signOut: () => Promise<void>;
}

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const refresh = useCallback(async () => {
    try {
      const current = await call(api.GET("/api/v1/me"));
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
    setMe(null);
  }, []);
  useEffect(() => {
    void refresh().catch(() => setMe(null));
  }, [refresh]);
  return <SessionContext.Provider value={{ me, refresh, signOut }}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside SessionProvider");
  return session;
}
