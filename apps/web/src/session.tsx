/** Who is logged in and what the hub lets them do: every mutating control asks `can()` first. */
import { createContext, useContext } from "react";
import type { WhoAmI } from "@fm/domain";

export interface Session {
  who: WhoAmI;
  can: (scope: "fleet.operate" | "fleet.admin") => boolean;
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error("useSession outside a logged-in page");
  return s;
}

export const sessionOf = (who: WhoAmI): Session => ({ who, can: (scope) => who.scopes.includes(scope) });
