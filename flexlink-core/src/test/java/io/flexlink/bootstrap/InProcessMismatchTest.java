package io.flexlink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.runtime.RankExchange;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A rank that joins an in-process rendezvous with another rank count fails, and so do, at once, the others. */
class InProcessMismatchTest {
    @Test
    void aRankWithAnotherRankCountEndsTheRendezvousForEveryRank() throws Exception {
        String token = UniqueId.random().token();
        Duration timeout = Duration.ofSeconds(60);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            RankExchange first = InProcessRendezvous.join(token, 2, 0, timeout);
            Future<byte[][]> waiting = pool.submit(() -> first.allGather(new byte[] {0}));
            FlexLinkException wrong = assertThrows(FlexLinkException.class,
                    () -> InProcessRendezvous.join(token, 3, 1, timeout));
            assertEquals(Result.INVALID_ARGUMENT, wrong.result());
            assertTrue(wrong.getMessage().contains("nranks: rank 1 says 3 ranks"), wrong.getMessage());
            // a third of the timeout: a bound the old code (waiting out the whole timeout) could not meet
            ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(20, TimeUnit.SECONDS));
            FlexLinkException peer = (FlexLinkException) e.getCause();
            assertEquals(Result.REMOTE_ERROR, peer.result(), peer.getMessage());
            assertTrue(peer.getMessage().contains("nranks"), peer.getMessage());
            InProcessRendezvous.leave(token);
        } finally {
            pool.shutdownNow();
        }
    }
}
