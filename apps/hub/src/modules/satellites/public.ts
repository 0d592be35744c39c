/** What other modules may use of satellites: the rows identity's bootstrap reconciles FM_EXPECTED_SATELLITES into. */
import { satelliteRepo, type SatelliteRepo } from "./repo.ts";

export type { SatelliteService } from "./service.ts";

export const satelliteRows: Pick<SatelliteRepo, "exists" | "findByName" | "replaceSites"> = satelliteRepo;
