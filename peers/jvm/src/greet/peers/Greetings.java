package greet.peers;

import java.io.PrintStream;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The original experiment's Greetings API, without a container: the five words, the greeting
 * and the delay (a sleep that holds the request's thread, as the Spring controller's did), and
 * what both launchers share: the flags of the Rust servers, the start-up line the harness reads,
 * and a clean exit on SIGTERM.
 */
public final class Greetings {
    static final String[] WORDS = {"Hello", "Hi", "Olá", "Oi", "Hallo"};

    private Greetings() {}

    /** The body for the values of {@code name} (Spring joins repeated values with commas). */
    static String greeting(String[] names) {
        String name = names == null ? "" : String.join(",", names);
        if (name.isEmpty()) {
            name = "World";
        }
        return WORDS[ThreadLocalRandom.current().nextInt(WORDS.length)] + " " + name + "!";
    }

    /** Sleeps the configured delay on the request's thread. */
    static void delay(long millis) {
        if (millis <= 0) {
            return;
        }
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The flags every server of the comparison takes. */
    static final class Options {
        String host = "127.0.0.1";
        int port = 8080;
        long delayMs = 1000;
        /** Accepted for the harness's sake; the containers keep their own acceptor threads. */
        int workers = Runtime.getRuntime().availableProcessors();
        /** The request thread pool: Spring Boot's default of 200. */
        int threads = 200;
        int backlog = 4096;
        int shutdownTimeoutSecs = 10;

        static Options parse(String program, String[] args) {
            Options o = new Options();
            o.host = env("HOST", o.host);
            o.port = Integer.parseInt(env("PORT", String.valueOf(o.port)));
            for (int i = 0; i < args.length; i++) {
                String flag = args[i];
                if (flag.equals("--help")) {
                    System.out.println("usage: " + program + " [--host H] [--port P] [--delay-ms D] "
                            + "[--workers N] [--blocking-threads N] [--backlog N] [--shutdown-timeout-secs S]");
                    System.exit(0);
                }
                if (i + 1 >= args.length) {
                    fail(program, "flag " + flag + " needs a value");
                }
                String value = args[++i];
                try {
                    switch (flag) {
                        case "--host": o.host = value; break;
                        case "--port": o.port = Integer.parseInt(value); break;
                        case "--delay-ms": o.delayMs = Long.parseLong(value); break;
                        case "--workers": o.workers = Integer.parseInt(value); break;
                        case "--blocking-threads": o.threads = Integer.parseInt(value); break;
                        case "--backlog": o.backlog = Integer.parseInt(value); break;
                        case "--shutdown-timeout-secs": o.shutdownTimeoutSecs = Integer.parseInt(value); break;
                        default: fail(program, "unexpected argument '" + flag + "'");
                    }
                } catch (NumberFormatException e) {
                    fail(program, "invalid value '" + value + "' for '" + flag + "'");
                }
            }
            if (o.threads < 1 || o.port < 0 || o.port > 65535 || o.delayMs < 0) {
                fail(program, "a value is out of range");
            }
            return o;
        }

        private static String env(String name, String otherwise) {
            String value = System.getenv(name);
            return value == null || value.isEmpty() ? otherwise : value;
        }
    }

    static void fail(String program, String why) {
        System.err.println(program + ": error: " + why + " (see --help)");
        System.exit(2);
    }

    /** The start-up line the harness reads the address from, as the Rust servers write it. */
    static void listening(String program, String host, int port, Options o) {
        PrintStream err = System.err;
        err.println(program + " listening addr=" + host + ":" + port + " threads=" + o.threads
                + " delay_ms=" + o.delayMs + " backlog=" + o.backlog);
        err.flush();
    }

    /** Runs {@code stop} on SIGTERM or Ctrl-C, then exits 0, as the Rust servers do. */
    @SuppressWarnings("removal")
    static void onSignal(String program, Runnable stop) {
        sun.misc.SignalHandler handler = signal -> {
            System.err.println(program + " " + signal.getName() + " received: stopping");
            try {
                stop.run();
            } finally {
                System.exit(0);
            }
        };
        sun.misc.Signal.handle(new sun.misc.Signal("TERM"), handler);
        sun.misc.Signal.handle(new sun.misc.Signal("INT"), handler);
    }
}
