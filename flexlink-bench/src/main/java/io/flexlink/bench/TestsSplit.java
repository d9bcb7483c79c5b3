package io.flexlink.bench;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.util.Locale;
import java.util.Map;

/**
 * nccl-tests' NCCL_TESTS_SPLIT and NCCL_TESTS_SPLIT_MASK (common.cu, run()): a color per rank, computed
 * from the rank with one of {@code AND}/{@code &}, {@code OR}/{@code |}, {@code MOD}/{@code %},
 * {@code DIV}/{@code /} and a value (decimal, {@code 0x} hexadecimal, {@code 0b} binary, or octal with a
 * leading 0, as C's strtoul with base 0 reads it); NCCL_TESTS_SPLIT_MASK is a hexadecimal mask, the same
 * as {@code AND} with it, and wins when both are set, as in nccl-tests. The ranks of one color form one
 * sub-communicator, ordered by rank (nccl-tests' key is the rank too).
 *
 * <p>Where nccl-tests quietly runs unsplit (an operation it does not know, a value that is no number) or
 * divides by zero ({@code MOD 0}), this refuses the value, naming the variable: a script that asked for a
 * split must not measure the whole job without noticing.
 */
final class TestsSplit {
    static final String SPLIT = "NCCL_TESTS_SPLIT";
    static final String MASK = "NCCL_TESTS_SPLIT_MASK";

    enum Op {
        AND("&"), OR("|"), MOD("%"), DIV("/");

        final String symbol;

        Op(String symbol) {
            this.symbol = symbol;
        }
    }

    /** The variable the split came from, and its text as given. */
    final String variable;
    final String text;
    final Op op;
    final int value;

    private TestsSplit(String variable, String text, Op op, int value) {
        this.variable = variable;
        this.text = text;
        this.op = op;
        this.value = value;
    }

    /** The split the environment asks for, or null when neither variable is set. */
    static TestsSplit fromEnvironment(Map<String, String> env) {
        String mask = env.get(MASK);
        if (mask != null) {
            return new TestsSplit(MASK, mask, Op.AND, mask(mask));
        }
        String split = env.get(SPLIT);
        if (split == null) {
            return null;
        }
        String s = split.trim();
        for (Op op : Op.values()) {
            String prefix = s.regionMatches(true, 0, op.name(), 0, op.name().length()) ? op.name()
                    : s.startsWith(op.symbol) ? op.symbol : null;
            if (prefix != null) {
                int v = number(split, s.substring(prefix.length()).trim());
                if ((op == Op.MOD || op == Op.DIV) && v == 0) {
                    throw refusal(SPLIT, split, op.name() + " 0 divides by zero (nccl-tests crashes)");
                }
                return new TestsSplit(SPLIT, split, op, v);
            }
        }
        throw refusal(SPLIT, split, "not <operation><value> with an operation of AND (&), OR (|), MOD (%) or "
                + "DIV (/), e.g. 'MOD 2' or '&0x1'");
    }

    /** The color of rank {@code rank}: never negative, since the rank and the value are not. */
    int color(int rank) {
        switch (op) {
            case AND: return rank & value;
            case OR: return rank | value;
            case MOD: return rank % value;
            default: return rank / value;
        }
    }

    /** How the header says the rule: {@code color = rank % 2}. */
    String rule() {
        return "color = rank " + op.symbol + " " + (op == Op.AND || op == Op.OR ? "0x" + Integer.toHexString(value)
                : String.valueOf(value));
    }

    /** {@code NCCL_TESTS_SPLIT=MOD 2}. */
    String setting() {
        return variable + "=" + text;
    }

    /** A non-negative int, as strtoul with base 0 reads it (or binary after 0b), and nothing after it. */
    private static int number(String whole, String text) {
        String d = text.toLowerCase(Locale.ROOT);
        int radix = 10;
        if (d.startsWith("0b")) {
            radix = 2;
            d = d.substring(2);
        } else if (d.startsWith("0x")) {
            radix = 16;
            d = d.substring(2);
        } else if (d.length() > 1 && d.startsWith("0")) {
            radix = 8;
            d = d.substring(1);
        }
        return parse(SPLIT, whole, text, d, radix);
    }

    /** NCCL_TESTS_SPLIT_MASK: hexadecimal, with or without 0x (strtoul with base 16). */
    private static int mask(String text) {
        String d = text.trim().toLowerCase(Locale.ROOT);
        if (d.startsWith("0x")) {
            d = d.substring(2);
        }
        return parse(MASK, text, text.trim(), d, 16);
    }

    private static int parse(String variable, String whole, String shown, String digits, int radix) {
        try {
            if (!digits.isEmpty() && Character.digit(digits.charAt(0), radix) >= 0) {
                return Integer.parseInt(digits, radix);
            }
        } catch (NumberFormatException e) {
            // below: not a number, or above 2^31 - 1
        }
        String what = radix == 16 ? "a hexadecimal" : radix == 2 ? "a binary" : radix == 8 ? "an octal" : "a";
        throw refusal(variable, whole, "'" + shown + "' is not " + what + " number from 0 to 2147483647");
    }

    static FlexLinkException refusal(String variable, String value, String why) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, variable + ": '" + value + "': " + why);
    }
}
