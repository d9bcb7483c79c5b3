package io.flexlink.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A fixed share must name an auxiliary path that flexlink.paths enables; anything else is a usage error. */
class ShareValidationTest {
    @Test
    void aShareForAPathThatIsNotEnabledIsRefused() {
        FlexLinkConfig c = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "primary")
                .set(FlexLinkConfig.SHARE, "pcie=0.3").build();
        FlexLinkException e = assertThrows(FlexLinkException.class, c::shares);
        assertEquals(Result.INVALID_ARGUMENT, e.result());
        assertTrue(e.getMessage().contains("'pcie'") && e.getMessage().contains("flexlink.paths"), e.getMessage());

        FlexLinkConfig nvshmem = FlexLinkConfig.builder().set(FlexLinkConfig.SHARE, "nvshmem=0.2").build();
        assertTrue(assertThrows(FlexLinkException.class, nvshmem::shares).getMessage().contains("'nvshmem'"));
    }

    @Test
    void sharesForEnabledPathsAreKept() {
        FlexLinkConfig c = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "primary,pcie,nvshmem")
                .set(FlexLinkConfig.SHARE, "pcie=0.2,nvshmem=0.1").build();
        assertEquals(Map.of("pcie", 0.2, "nvshmem", 0.1), c.shares());
        assertEquals(Map.of(), FlexLinkConfig.builder().build().shares(), "auto: the balancer chooses");
    }

    @Test
    void primaryAndUnknownPathsAreNotShares() {
        for (String bad : new String[] {"primary=0.5", "pciee=0.1", "pcie", "pcie=1.5", "pcie=0.7,nvshmem=0.5"}) {
            FlexLinkConfig c = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "primary,pcie,nvshmem")
                    .set(FlexLinkConfig.SHARE, bad).build();
            assertEquals(Result.INVALID_ARGUMENT, assertThrows(FlexLinkException.class, c::shares).result(), bad);
        }
    }
}
